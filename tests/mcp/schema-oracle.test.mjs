// The TypeScript dsh declares for downstream MCP tools, checked against json-schema-to-typescript
// as an oracle: for every input and output schema of the recorded tools/list answers in schemas/
// (the three stock npm servers, pydantic- and zod-shaped tools), sample values (one valid value
// derived from the schema and its mutants: each member of another JSON type, each property
// removed, one added, tuples one shorter and one longer) are type-checked by the TypeScript
// compiler as `const v: Ours = sample` and `const v: Theirs = sample`; both must accept and refuse
// the same samples. Ours is the declaration text as run_code's description carries it (made by
// mcp-schema-dump through dshh__mcp_downstream_declare), typed as Parameters<typeof ns.tool>[0]
// and Awaited<ReturnType<typeof ns.tool>>. Usage: node --test tests/mcp/schema-oracle.test.mjs
// (SCHEMA_DUMP=build/tests/mcp/mcp-schema-dump).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const from = createRequire(join(here, "../clients/package.json"));
const ts = from("typescript");
const { compile } = from("json-schema-to-typescript");
const dump = resolve(process.env.SCHEMA_DUMP ?? join(here, "../../build/tests/mcp/mcp-schema-dump"));
const schemasDir = join(here, "schemas");
const files = readdirSync(schemasDir)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => join(schemasDir, f));
const fixtures = files.map((f) => JSON.parse(readFileSync(f, "utf8")));
const ours = execFileSync(dump, files, { encoding: "utf8" });

// The namespace and member identifiers dsh chose, in listing order (one block per server).
function members() {
  const blocks = ours.split(/^declare const /m).slice(1);
  assert.equal(blocks.length, fixtures.length);
  return blocks.map((block) => ({
    ns: block.match(/^([A-Za-z0-9_$]+): \{/)[1],
    tools: [...block.matchAll(/^ {2}([A-Za-z0-9_$]+)\(input\??: /gm)].map((m) => m[1]),
  }));
}

// ---- schemas as JSON Schema sees them ----------------------------------------------------------

function pointer(root, ref) {
  if (typeof ref !== "string" || !ref.startsWith("#")) return undefined;
  let at = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const seg = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    at = at?.[seg];
  }
  return at;
}

// Each schema position once (what dsh and the oracle read), with the callback seeing each.
function eachSchema(schema, visit, seen = new Set()) {
  if (!schema || typeof schema !== "object" || seen.has(schema)) return;
  seen.add(schema);
  visit(schema);
  for (const key of ["properties", "patternProperties", "$defs", "definitions"])
    for (const sub of Object.values(schema[key] ?? {})) eachSchema(sub, visit, seen);
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"])
    for (const sub of schema[key] ?? []) eachSchema(sub, visit, seen);
  for (const key of ["additionalProperties", "additionalItems", "items"])
    if (Array.isArray(schema[key])) schema[key].forEach((sub) => eachSchema(sub, visit, seen));
    else eachSchema(schema[key], visit, seen);
}

// The oracle reads the schema under dsh's documented conventions (examples/host/README.md,
// "Schemas as TypeScript"): an object that lists properties and says nothing of others is
// closed; prefixItems are the draft-07 tuple (items array, additionalItems) that
// json-schema-to-typescript 16 knows; a plain array's length is not typed. The root's title
// would name the root type: the test names it.
function forOracle(schema) {
  const copy = structuredClone(schema);
  delete copy.title;
  eachSchema(copy, (s) => {
    if (s.properties && Object.keys(s.properties).length && !("additionalProperties" in s))
      s.additionalProperties = false;
    if (Array.isArray(s.prefixItems)) {
      if ("items" in s) s.additionalItems = s.items;
      s.items = s.prefixItems;
      delete s.prefixItems;
    }
    if (s.items && !Array.isArray(s.items)) {
      delete s.minItems;
      delete s.maxItems;
    }
  });
  return copy;
}

const typeKeywords = [
  "$ref",
  "const",
  "enum",
  "type",
  "anyOf",
  "oneOf",
  "allOf",
  "properties",
  "patternProperties",
  "additionalProperties",
  "items",
  "prefixItems",
];
const hasType = (s) => s === false || (s !== null && typeof s === "object" && typeKeywords.some((k) => k in s));

// The places where a schema says nothing of a type (each may honestly be unknown in TypeScript):
// an untyped subschema, an array without items, an object without properties that allows any
// other member.
function untypedPlaces(schema) {
  let n = 0;
  eachSchema(schema, (s) => {
    for (const sub of [
      ...Object.values(s.properties ?? {}),
      ...(s.anyOf ?? []),
      ...(s.oneOf ?? []),
      ...(s.prefixItems ?? []),
    ])
      if (!hasType(sub)) n++;
    const types = [s.type].flat();
    if (types.includes("array") && !("items" in s) && !("prefixItems" in s)) n++;
    if (
      (types.includes("object") || (!s.type && !hasType(s))) &&
      !Object.keys(s.properties ?? {}).length &&
      s.additionalProperties !== false &&
      !hasType(s.additionalProperties) &&
      !s.patternProperties
    )
      n++;
    for (const key of ["additionalProperties", "items", "additionalItems"])
      if (s[key] === true || (s[key] && typeof s[key] === "object" && !Array.isArray(s[key]) && !hasType(s[key]))) n++;
  });
  return n + (hasType(schema) ? 0 : 1);
}

// ---- samples -----------------------------------------------------------------------------------

// One value the schema accepts (first branches, every property, a tuple at full length).
function validValue(schema, root, depth = 0) {
  if (schema === true || schema === undefined) return "anything";
  if (!schema || typeof schema !== "object" || depth > 12) return null;
  if (schema.$ref) return validValue(pointer(root, schema.$ref), root, depth + 1);
  if ("const" in schema) return structuredClone(schema.const);
  if (schema.enum) return structuredClone(schema.enum[0]);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s) => validValue(s, root, depth + 1)));
  if (schema.anyOf || schema.oneOf) {
    // A recursive union's non-recursive branch first, so the value ends.
    const branches = schema.anyOf ?? schema.oneOf;
    const flat = branches.find((b) => !JSON.stringify(b).includes("$ref")) ?? branches[0];
    return validValue(depth > 6 ? flat : branches[0], root, depth + 1);
  }
  const type =
    [schema.type].flat().find((t) => t && t !== "null") ??
    (schema.properties ? "object" : schema.items || schema.prefixItems ? "array" : [schema.type].flat()[0]);
  switch (type) {
    case "string":
      return "text";
    case "number":
    case "integer":
      return 3;
    case "boolean":
      return true;
    case "null":
      return null;
    case "array": {
      const prefix = schema.prefixItems ?? (Array.isArray(schema.items) ? schema.items : null);
      if (prefix) return prefix.map((s) => validValue(s, root, depth + 1));
      return depth > 6 ? [] : [validValue(schema.items, root, depth + 1)];
    }
    case "object":
    default: {
      const value = {};
      const required = new Set(schema.required ?? []);
      for (const [key, sub] of Object.entries(schema.properties ?? {}))
        if (required.has(key) || depth < 4) value[key] = validValue(sub, root, depth + 1);
      if (schema.additionalProperties && typeof schema.additionalProperties === "object")
        value.extra = validValue(schema.additionalProperties, root, depth + 1);
      return value;
    }
  }
}

const kind = (v) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

// The valid value and its mutants, each once.
function samples(schema) {
  const valid = validValue(schema, schema);
  const out = new Map();
  const add = (v) => out.size < 80 && out.set(JSON.stringify(v), v);
  add(valid);
  const others = ["x", 7, true, null, {}, []];
  const paths = [];
  (function walk(v, path) {
    paths.push(path);
    if (Array.isArray(v)) v.forEach((e, i) => walk(e, [...path, i]));
    else if (v && typeof v === "object") for (const k of Object.keys(v)) walk(v[k], [...path, k]);
  })(valid, []);
  const at = (v, path) => path.reduce((o, k) => o[k], v);
  const replace = (path, fn) => {
    const copy = structuredClone(valid);
    if (!path.length) return fn(copy);
    fn(at(copy, path.slice(0, -1)), path[path.length - 1]);
    return copy;
  };
  for (const path of paths) {
    const here = at(valid, path);
    for (const other of others)
      if (kind(other) !== kind(here)) add(path.length ? replace(path, (o, k) => (o[k] = other)) : other);
    if (here && typeof here === "object" && !Array.isArray(here)) {
      for (const k of Object.keys(here))
        add(
          replace(path, (o, key) => {
            const target = key === undefined ? o : o[key];
            delete target[k];
            return o;
          }),
        );
      add(
        replace(path, (o, key) => {
          (key === undefined ? o : o[key]).unexpected = 1;
          return o;
        }),
      );
    }
    if (Array.isArray(here) && here.length) {
      add(
        replace(path, (o, key) => {
          (key === undefined ? o : o[key]).pop();
          return o;
        }),
      );
      add(
        replace(path, (o, key) => {
          const a = key === undefined ? o : o[key];
          a.push(structuredClone(a[0]));
          return o;
        }),
      );
    }
  }
  return [...out.values()];
}

// ---- the comparison ----------------------------------------------------------------------------

async function buildSource() {
  const names = members();
  const parts = [ours];
  const cases = [];
  let n = 0;
  for (const [f, fixture] of fixtures.entries()) {
    assert.equal(names[f].tools.length, fixture.tools.length, `${fixture.server}: one member per tool`);
    for (const [t, tool] of fixture.tools.entries()) {
      for (const [kind, schema] of [
        ["input", tool.inputSchema],
        ["output", tool.outputSchema],
      ]) {
        if (!schema) continue;
        const ns = `Oracle_${n}`;
        const theirs = await compile(forOracle(schema), "OracleRoot", {
          bannerComment: "",
          format: false,
          unknownAny: true,
          additionalProperties: true,
          ignoreMinAndMaxItems: false,
          declareExternallyReferenced: true,
          strictIndexSignatures: false,
          cwd: schemasDir,
        });
        parts.push(`declare namespace ${ns} {\n${theirs}\n}\n`);
        const member = `${names[f].ns}.${names[f].tools[t]}`;
        const oursType = kind === "input" ? `Parameters<typeof ${member}>[0]` : `Awaited<ReturnType<typeof ${member}>>`;
        cases.push({
          id: n,
          label: `${fixture.server}.${tool.name} ${kind}`,
          oursType,
          theirsType: `${ns}.OracleRoot`,
          schema,
          samples: samples(schema),
        });
        n++;
      }
    }
  }
  const declarationsEnd = parts.join("").length;
  let text = parts.join("");
  const spans = [];
  for (const c of cases)
    for (const [i, value] of c.samples.entries()) {
      const json = JSON.stringify(value);
      for (const side of ["ours", "theirs"]) {
        const line = `const s${c.id}_${i}_${side}: ${side === "ours" ? c.oursType : c.theirsType} = ${json};\n`;
        spans.push({ start: text.length, end: text.length + line.length, c, i, side });
        text += line;
      }
    }
  return { text, cases, spans, declarationsEnd };
}

// The diagnostics of each text (a map of file name to text: the files are modules of one program).
function typeCheckFiles(texts) {
  const options = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts"],
    types: [],
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, lang, ...rest) =>
    texts.has(name)
      ? ts.createSourceFile(name, texts.get(name), lang, true)
      : getSourceFile.call(host, name, lang, ...rest);
  host.fileExists = (name) => texts.has(name) || fileExists.call(host, name);
  host.readFile = (name) => (texts.has(name) ? texts.get(name) : readFile.call(host, name));
  const program = ts.createProgram([...texts.keys()], options, host);
  return new Map(
    [...texts.keys()].map((name) => {
      const source = program.getSourceFile(name);
      return [name, [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]];
    }),
  );
}

const typeCheck = (text) => typeCheckFiles(new Map([["/oracle/check.ts", text]])).get("/oracle/check.ts");

const message = (d) => `${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;

test("dsh's declarations accept and refuse the same samples as json-schema-to-typescript's", async () => {
  const { text, cases, spans, declarationsEnd } = await buildSource();
  const diagnostics = typeCheck(text);
  const inDeclarations = diagnostics.filter((d) => d.start === undefined || d.start < declarationsEnd);
  assert.deepEqual(
    inDeclarations.map((d) => `${message(d)} at: ${text.slice(d.start, d.start + 80)}`),
    [],
    "both declarations type-check",
  );
  const refused = new Set();
  for (const d of diagnostics) {
    const span = spans.find((s) => d.start >= s.start && d.start < s.end);
    if (span) refused.add(`${span.c.id}_${span.i}_${span.side}`);
  }
  let total = 0,
    accepted = 0,
    refusedBoth = 0;
  const disagreements = [];
  for (const c of cases)
    for (const [i, value] of c.samples.entries()) {
      total++;
      const oursOk = !refused.has(`${c.id}_${i}_ours`),
        theirsOk = !refused.has(`${c.id}_${i}_theirs`);
      accepted += oursOk && theirsOk;
      refusedBoth += !oursOk && !theirsOk;
      if (oursOk !== theirsOk)
        disagreements.push(
          `${c.label}: ${JSON.stringify(value)} ours ${oursOk ? "accepts" : "refuses"}, theirs ${theirsOk ? "accepts" : "refuses"}`,
        );
    }
  console.log(
    `${cases.length} schemas of ${fixtures.reduce((n, f) => n + f.tools.length, 0)} tools in ${fixtures.length} servers, ` +
      `${total} samples: ${accepted} accepted and ${refusedBoth} refused by both, ${disagreements.length} disagreements`,
  );
  assert.deepEqual(disagreements, []);
  assert.ok(
    cases.every((c) => c.samples.some((_, i) => !refused.has(`${c.id}_${i}_ours`))),
    "every schema's valid value is accepted",
  );
});

test("no unknown where the schema had a type; one tool's declaration is self-contained and the same", () => {
  const names = members();
  let typed = 0;
  const alone = new Map();
  for (const [f, fixture] of fixtures.entries())
    for (const [t, tool] of fixture.tools.entries()) {
      const qualified = `${names[f].ns}.${names[f].tools[t]}`;
      const one = execFileSync(dump, ["--tool", qualified, ...files], { encoding: "utf8" });
      const code = one.replace(/\/\*\*[\s\S]*?\*\//g, "");
      const unknowns = (code.match(/\bunknown\b/g) ?? []).length;
      const allowed =
        untypedPlaces(tool.inputSchema ?? true) + (tool.outputSchema ? untypedPlaces(tool.outputSchema) : 1);
      assert.ok(unknowns <= allowed, `${qualified}: ${unknowns} unknown for ${allowed} untyped places:\n${one}`);
      typed += unknowns === 0 || (!tool.outputSchema && unknowns === 1);
      // One namespace of one member, the member the whole declaration has; the named types are its own.
      const header = one.search(/^\/\*\* A tool of the MCP server .*\n^declare const /m);
      assert.ok(header > -1 && one.endsWith("};\n"), `${qualified}: one namespace:\n${one}`);
      const member = one.slice(one.indexOf("{\n", header) + 2, -"};\n".length);
      assert.ok(ours.includes(member), `${qualified}: the member as in the namespace`);
      const wrapped = `export {};\n${one}`;
      alone.set(`/oracle/${qualified}.ts`, wrapped);
    }
  for (const [name, diagnostics] of typeCheckFiles(alone))
    assert.deepEqual(diagnostics.map(message), [], `${name} alone:\n${alone.get(name)}`);
  assert.throws(
    () => execFileSync(dump, ["--tool", "nope.nothing", ...files], { stdio: "pipe" }),
    (e) => e.status === 3 && e.stdout.length === 0,
  );
  console.log(`${typed} tools declared without unknown (but Promise<unknown> where no outputSchema)`);
});

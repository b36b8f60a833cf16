// Validates the Kubernetes manifests of examples/deploy/kubernetes against the Kubernetes API
// schemas of kubernetes-models (pinned in package-lock.json), offline. The agent-sandbox CRDs have
// no schema there: their pod template is validated as a core PodTemplateSpec and their own fields
// are checked here. Usage: node manifests.mjs DIR (prints one line per object; exit 1 on an error).
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Service } from "kubernetes-models/v1/Service";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { PodTemplateSpec } from "kubernetes-models/v1/PodTemplateSpec";

const core = { "apps/v1 Deployment": Deployment, "v1 Service": Service, "v1 ConfigMap": ConfigMap };
const sandbox = "extensions.agents.x-k8s.io/v1alpha1";

function checkSandboxKind(obj) {
  const spec = obj.spec ?? {};
  const need = (cond, what) => { if (!cond) throw new Error(`${obj.kind}: ${what}`); };
  if (obj.kind === "SandboxTemplate") {
    need(spec.podTemplate && spec.podTemplate.spec, "spec.podTemplate.spec is required");
    need(spec.service === undefined || typeof spec.service === "boolean", "spec.service must be a boolean");
    new PodTemplateSpec(spec.podTemplate).validate();
  } else if (obj.kind === "SandboxWarmPool") {
    need(Number.isInteger(spec.replicas) && spec.replicas >= 0, "spec.replicas must be an integer >= 0");
    need(typeof spec.sandboxTemplateRef?.name === "string", "spec.sandboxTemplateRef.name is required");
  } else if (obj.kind === "SandboxClaim") {
    need(typeof spec.sandboxTemplateRef?.name === "string", "spec.sandboxTemplateRef.name is required");
  } else {
    throw new Error(`unknown kind ${obj.kind} of ${sandbox}`);
  }
}

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : name.endsWith(".yaml") ? [path] : [];
  });
}

const dir = process.argv[2];
let errors = 0;
for (const file of files(dir).sort()) {
  for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
    const obj = doc.toJS();
    const where = `${relative(dir, file)}: ${obj?.kind ?? "?"} ${obj?.metadata?.name ?? "?"}`;
    try {
      if (doc.errors.length) throw new Error(doc.errors[0].message);
      const model = core[`${obj.apiVersion} ${obj.kind}`];
      if (model) new model(obj).validate();
      else if (obj.apiVersion === sandbox) checkSandboxKind(obj);
      else throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
      console.log(`valid: ${where}`);
    } catch (e) {
      errors++;
      console.log(`INVALID: ${where}: ${e.message}`);
    }
  }
}
process.exit(errors ? 1 : 0);

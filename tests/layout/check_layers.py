#!/usr/bin/env python3
"""Checks the include layering of a C tree: check_layers.py TREE_DIR.

TREE_DIR/meson.build names the floors, lowest first:
    include_layers = ['base', 'compose', 'run', 'serve mcp workflow', '.']
(same-floor folders share one entry, separated by spaces; '.' is TREE_DIR itself). Every
`#include "..."` of every .c and .h under TREE_DIR that names a file of the tree is checked:

- a file may not include a header of a higher floor;
- no include cycle, between files or between modules (a .c with the headers that declare its
  functions: a.c including b.h and b.c including a.h is a cycle);
- a header declares the functions (and extern variables) of one .c only, unless a README.md of the
  tree says why, in a line `**Shared header** `NAME.h`: REASON`.

Exits 0 and prints a summary when all hold; otherwise prints one line per problem and exits 1.
"""
import ast
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
NOT_NAMES = {'__attribute__', 'void', 'char', 'short', 'int', 'long', 'float', 'double', 'signed',
             'unsigned', 'const', 'volatile', 'struct', 'union', 'enum', 'sizeof', 'static', 'inline'}
ALLOW = re.compile(r'\*\*Shared header\*\*\s+`([^`]+\.h)`[^:\n]*:\s*(\S.*)')


def read_layers(tree):
    path = os.path.join(tree, 'meson.build')
    try:
        text = open(path, encoding='utf-8').read()
    except OSError as e:
        sys.exit(f'{path}: cannot read: {e.strerror}')
    m = re.search(r'^include_layers\s*=\s*(\[[^\]]*\])', text, re.M)
    if not m:
        sys.exit(f"{path}: no `include_layers = [...]` variable (the floors, lowest first)")
    try:
        entries = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        sys.exit(f'{path}: include_layers is not a list of strings')
    floors = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, str) or not entry.split():
            sys.exit(f'{path}: include_layers[{index}] is not a non-empty string')
        for folder in entry.split():
            folder = os.path.normpath(folder)
            if folder in floors:
                sys.exit(f"{path}: folder '{folder}' is on two floors of include_layers")
            floors[folder] = index
    return floors, entries


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)


def strip_blocks(text):
    """Text without brace blocks (struct, enum and inline function bodies)."""
    out, depth = [], 0
    for ch in text:
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return ''.join(out)


def declared(header_text):
    """Names of the functions and extern variables a header declares."""
    text = strip_comments(header_text)
    text = re.sub(r'^\s*#(?:[^\n]*\\\n)*[^\n]*', '', text, flags=re.M)
    names = set()
    for stmt in strip_blocks(text).split(';'):
        stmt = ' '.join(stmt.split())
        if not stmt or stmt.startswith('typedef'):
            continue
        if stmt.startswith('extern'):
            m = re.search(r'(\w+)\s*(\[[^\]]*\])?\s*$', stmt)
            if m:
                names.add(m.group(1))
            continue
        for m in re.finditer(r'\b(\w+)\s*\(', stmt):
            if m.group(1) in NOT_NAMES or re.search(r'\(\s*\*\s*$', stmt[:m.start()]):
                continue  # a type, an attribute, or a function pointer (*name)
            names.add(m.group(1))
            break
    return names


def defines(c_text, name):
    """Whether a .c file defines name at file scope (a function body or an initialized variable)."""
    text = strip_comments(c_text)
    for m in re.finditer(r'^(?!static\b)[A-Za-z_][^;{}#]*?\b' + re.escape(name) + r'\s*([(\[=])',
                         text, re.M):
        if m.group(1) in '[=':
            return True
        rest = text[m.end():]
        semi, brace = rest.find(';'), rest.find('{')
        if brace >= 0 and (semi < 0 or brace < semi):
            return True
    return False


def find_cycle(graph):
    """One cycle of graph (node -> set of nodes) as a list of nodes, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        sys.exit('usage: check_layers.py TREE_DIR (a folder whose meson.build sets include_layers)')
    tree = os.path.normpath(argv[1])
    floors, entries = read_layers(tree)
    files, readmes = [], []
    for root, dirs, names in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not d.startswith('.'))
        for name in sorted(names):
            rel = os.path.relpath(os.path.join(root, name), tree)
            if name.endswith(('.c', '.h')):
                files.append(rel)
            elif name == 'README.md':
                readmes.append(rel)
    problems = []

    def floor_of(rel):
        """(floor, folder) of a file: its nearest listed folder; '.' only for the tree's own files."""
        folder = os.path.dirname(rel)
        while folder:
            if folder in floors:
                return floors[folder], folder
            folder = os.path.dirname(folder)
        if not os.path.dirname(rel) and '.' in floors:
            return floors['.'], '.'
        return None, None

    by_base = {}
    for rel in files:
        by_base.setdefault(os.path.basename(rel), []).append(rel)
    for base, rels in sorted(by_base.items()):
        if len(rels) > 1:
            problems.append(f"{' and '.join(rels)}: two files named {base} (an include of it is ambiguous)")
    texts = {rel: open(os.path.join(tree, rel), encoding='utf-8', errors='replace').read() for rel in files}

    def resolve(rel, name):
        here = os.path.normpath(os.path.join(os.path.dirname(rel), name))
        if here in texts:
            return here
        found = by_base.get(os.path.basename(name), [])
        return found[0] if len(found) == 1 else None

    includes = {rel: [] for rel in files}
    for rel in files:
        floor, folder = floor_of(rel)
        if floor is None:
            problems.append(f"{rel}: its folder is on no floor of include_layers {entries}")
            continue
        for m in INCLUDE.finditer(texts[rel]):
            target = resolve(rel, m.group(1))
            if not target:
                continue  # outside the tree (another project folder, a dependency)
            includes[rel].append(target)
            tfloor, tfolder = floor_of(target)
            if tfloor is not None and tfloor > floor:
                line = texts[rel].count('\n', 0, m.start()) + 1
                problems.append(f"{rel}:{line}: includes {target}: floor '{folder}' ({floor}) may not "
                                f"include the higher floor '{tfolder}' ({tfloor}); floors, lowest first: "
                                f"{entries}")

    # Which .c defines what each header declares.
    allowed = {}
    for readme in readmes:
        for m in ALLOW.finditer(open(os.path.join(tree, readme), encoding='utf-8').read()):
            allowed[m.group(1)] = (readme, m.group(2).strip())
    c_files = [rel for rel in files if rel.endswith('.c')]
    owners = {}
    for rel in files:
        if not rel.endswith('.h'):
            continue
        owner_set = set()
        for name in declared(texts[rel]):
            owner_set.update(c for c in c_files if defines(texts[c], name))
        owners[rel] = owner_set
        if len(owner_set) > 1 and os.path.basename(rel) not in allowed:
            problems.append(f"{rel}: declares functions of {len(owner_set)} files ({', '.join(sorted(owner_set))}); "
                            f"split it, one header per .c, or give the reason in a README.md line "
                            f"'**Shared header** `{os.path.basename(rel)}`: REASON'")

    # Cycles between files, then between modules (a header stands for the .c files it declares).
    file_graph = {rel: set(targets) for rel, targets in includes.items()}
    cycle = find_cycle(file_graph)
    if cycle:
        problems.append('include cycle: ' + ' -> '.join(cycle))

    # The .c files of one shared header are one module (their header includes would be a cycle).
    group = {}

    def rep(rel):
        while group.get(rel, rel) != rel:
            rel = group[rel]
        return rel

    for owner_set in owners.values():
        first, *rest = sorted(owner_set) or [None]
        for other in rest:
            group[rep(other)] = rep(first)

    def module_of(rel):
        return {rep(o) for o in owners.get(rel) or {rel}}

    module_graph = {}
    for rel, targets in includes.items():
        for a in module_of(rel) if rel.endswith('.h') else {rep(rel)}:
            for target in targets:
                for b in module_of(target):
                    if a != b:
                        module_graph.setdefault(a, set()).add(b)
    cycle = find_cycle(module_graph)
    if cycle:
        members = {}
        for c in c_files:
            members.setdefault(rep(c), []).append(c)

        def label(node):
            names = sorted(members.get(node, [node]))
            return names[0] if len(names) == 1 else f"{names[0]} (+{len(names) - 1} sharing a header)"
        problems.append('module cycle (each file includes a header declaring the next one\'s functions): '
                        + ' -> '.join(label(n) for n in cycle))

    if problems:
        for p in problems:
            print(f'{tree}/{p}' if not p.startswith(('include cycle', 'module cycle')) else f'{tree}: {p}')
        print(f'{tree}: {len(problems)} layout problem(s)')
        return 1
    nincludes = sum(len(t) for t in includes.values())
    print(f'{tree}: layout ok: {len(files)} files, {nincludes} includes inside the tree, floors {entries}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

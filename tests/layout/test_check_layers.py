#!/usr/bin/env python3
"""check_layers.py on small made-up trees: each rule fails with its message, and passes without."""
import os
import subprocess
import sys
import tempfile
import unittest

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'check_layers.py')


def tree(files):
    root = tempfile.mkdtemp(prefix='layout-')
    files = {'meson.build': "include_layers = ['base', 'top1 top2', '.']\n", **files}
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), 'w') as f:
            f.write(text)
    return root


def check(files):
    r = subprocess.run([sys.executable, CHECK, tree(files)], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


GOOD = {
    'base/x_loop.h': 'int x_loop(void);\n',
    'base/x_loop.c': '#include "x_loop.h"\nint x_loop(void)\n{\n    return 0;\n}\n',
    'top1/x_a.h': '#include "x_loop.h"\nint x_a(void);\n',
    'top1/x_a.c': '#include "x_a.h"\nint x_a(void)\n{\n    return x_loop();\n}\n',
    'x_main.c': '#include "x_a.h"\nint main(void)\n{\n    return x_a();\n}\n',
}


class CheckLayers(unittest.TestCase):
    def test_layered_tree_passes(self):
        rc, out = check(GOOD)
        self.assertEqual(rc, 0, out)
        self.assertIn('layout ok', out)

    def test_upward_include_fails(self):
        rc, out = check({**GOOD, 'base/x_loop.c': '#include "x_loop.h"\n#include "x_a.h"\n'
                                                  'int x_loop(void)\n{\n    return 0;\n}\n'})
        self.assertEqual(rc, 1, out)
        self.assertIn("base/x_loop.c:2: includes top1/x_a.h: floor 'base' (0) may not include the higher "
                      "floor 'top1' (1)", out)

    def test_module_cycle_fails(self):
        rc, out = check({**GOOD,
                         'top1/x_b.h': 'int x_b(void);\n',
                         'top1/x_b.c': '#include "x_a.h"\n#include "x_b.h"\nint x_b(void)\n{\n    return x_a();\n}\n',
                         'top1/x_a.c': '#include "x_a.h"\n#include "x_b.h"\nint x_a(void)\n{\n    return x_b();\n}\n'})
        self.assertEqual(rc, 1, out)
        self.assertIn('module cycle', out)
        self.assertIn('top1/x_a.c -> top1/x_b.c -> top1/x_a.c', out)

    def test_file_cycle_fails(self):
        rc, out = check({**GOOD, 'base/x_p.h': '#include "x_q.h"\n', 'base/x_q.h': '#include "x_p.h"\n'})
        self.assertEqual(rc, 1, out)
        self.assertIn('include cycle: base/x_p.h -> base/x_q.h -> base/x_p.h', out)

    def test_shared_header_needs_a_reason(self):
        shared = {**GOOD,
                  'top1/x_a.h': '#include "x_loop.h"\nint x_a(void);\nint x_b(void);\n',
                  'top1/x_b.c': '#include "x_a.h"\nint x_b(void)\n{\n    return 1;\n}\n'}
        rc, out = check(shared)
        self.assertEqual(rc, 1, out)
        self.assertIn('top1/x_a.h: declares functions of 2 files (top1/x_a.c, top1/x_b.c)', out)
        rc, out = check({**shared, 'top1/README.md': '**Shared header** `x_a.h`: one small family.\n'})
        self.assertEqual(rc, 0, out)

    def test_folder_on_no_floor_fails(self):
        rc, out = check({**GOOD, 'other/x_o.c': 'int x_o;\n'})
        self.assertEqual(rc, 1, out)
        self.assertIn('other/x_o.c: its folder is on no floor', out)

    def test_missing_variable_is_said(self):
        root = tree(GOOD)
        with open(os.path.join(root, 'meson.build'), 'w') as f:
            f.write("project('x')\n")
        r = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('no `include_layers = [...]` variable', r.stderr)


if __name__ == '__main__':
    unittest.main()

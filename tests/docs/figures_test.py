#!/usr/bin/env python3
"""scripts/figures on small made-up trees: it finds a stale block and prints
its diff, rewrites it from the data, and names the file and line of an
unknown generator and the path of a missing data file.

Usage: figures_test.py SOURCE_DIR"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = pathlib.Path(sys.argv.pop(1) if len(sys.argv) > 1
                      else pathlib.Path(__file__).resolve().parents[2])
FIGURES = SOURCE / "scripts" / "figures"
STEPPING = "docs/data/chaos_stepping"


def page(block, body="stale: 1 run, 99 steps lost\n"):
    return ("# A page\n\nText before.\n"
            f"<!-- figures: {block} -->\n{body}<!-- /figures -->\n\nText after.\n")


class FiguresTest(unittest.TestCase):
    def setUp(self):
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="figures-test-"))
        (self.root / "docs").mkdir()

    def tearDown(self):
        shutil.rmtree(self.root)

    def with_data(self):
        shutil.copytree(SOURCE / STEPPING, self.root / STEPPING)

    def write(self, text, name="docs/page.md"):
        (self.root / name).write_text(text)

    def run_figures(self, *args):
        done = subprocess.run([sys.executable, str(FIGURES), "--root", str(self.root), *args],
                              capture_output=True, text=True)
        return done.returncode, done.stdout, done.stderr

    def test_a_stale_block_fails_the_check_with_its_diff_and_is_rewritten(self):
        self.with_data()
        self.write(page("chaos_stepping"))
        code, out, _ = self.run_figures("--check")
        self.assertEqual(code, 1)
        self.assertIn("-stale: 1 run, 99 steps lost", out)
        self.assertIn("+`kiln bench chaos --session-type llvm", out)
        self.assertIn("docs/page.md (block 'chaos_stepping', line 4)", out)
        self.assertIn("run scripts/figures", out)
        self.assertEqual(self.run_figures()[0], 0)
        text = (self.root / "docs/page.md").read_text()
        self.assertNotIn("stale", text)
        self.assertIn("3 runs, 0 steps lost", " ".join(text.split()))
        self.assertIn(f"`{STEPPING}/`", text)      # the footer names the data
        self.assertIn("2026-11-28", text)              # and its date, from the sidecar
        self.assertTrue(text.startswith("# A page\n\nText before.\n<!-- figures: chaos_stepping -->\n"))
        self.assertTrue(text.endswith("<!-- /figures -->\n\nText after.\n"))
        self.assertEqual(self.run_figures("--check")[:2], (0, ""))

    def test_the_leaderboard_is_the_mean_and_spread_over_seeds_with_baselines(self):
        folder = self.root / "docs/data/leaderboard"
        folder.mkdir(parents=True)
        shutil.copy(SOURCE / "docs/data/leaderboard/summarize.py", folder)
        (folder / "meta.json").write_text(
            '{"command": "scripts/leaderboard", "date": "2026-11-28", "machine": "2 cores"}')

        def report(score, invalid):
            benchmarks = [{"ir_instruction_count_oz": 50, "ir_instruction_count_o0": 100,
                           "ir_instruction_count_o3": 40}]
            return json.dumps({"geomean_ir_instruction_count_vs_oz": score, "step_budget": 200,
                               "benchmarks": benchmarks, "failures": [],
                               "counts": {"valid": 1 - invalid, "invalid": invalid}})

        (folder / "held-out-greedy-seed1.json").write_text(report(1.0, 0))
        (folder / "held-out-greedy-seed2.json").write_text(report(1.2, 1))
        (folder / "held-out-ppo-autophase-seed1.json").write_text(
            '{"ppo": %s, "random_search": %s}' % (report(0.9, 0), report(0.8, 0)))
        self.write(page("leaderboard"))
        self.assertEqual(self.run_figures()[0], 0)
        text = (self.root / "docs/page.md").read_text()
        self.assertIn("| greedy | 1.100x ± 0.141 | 1, 2 | 200 | 1 / 1 / 0 |", text)
        self.assertIn("| PPO (autophase) | 0.900x | 1 | 200 | 1 / 0 / 0 |", text)
        self.assertIn("| -O0 | 0.500x |", text)   # -Oz's 50 over -O0's 100
        self.assertIn("| -O3 | 1.250x |", text)
        self.assertIn("`docs/data/leaderboard/`\n(`scripts/leaderboard`; 2026-11-28", text)

    def test_the_nesting_sweep_is_a_table_and_a_chart_per_experiment_count(self):
        rows = []
        for k in (2, 4):
            for lull in (0.25, 0.5):
                for name, gain in (("dedicated", 1.0), ("shared", 1.1), ("nested", 1.5)):
                    rows.append({"work": "llvm", "experiments": str(k), "layout": name,
                                 "host_budget": "cgroup-v1 quota 0.50 CPU per host",
                                 "lull_target_pct": 100 * lull, "lull_pct": 100 * lull + 2,
                                 "aggregate_collect_steps_s": 100 * gain, "x_aggregate": gain,
                                 "ideal_x": 2.0, "x_wall": 0.8 * gain, "ideal_x_wall": 1.33,
                                 "fairness_jain_pct": 99.4})
            rows.append({"experiments": str(k), "experiment": "exp-0", "layout": "nested"})
        data = self.root / "docs/data/nesting_sweep.json"
        data.parent.mkdir(parents=True)
        data.write_text(json.dumps({"title": "kiln bench nesting", "rows": rows, "notes": []}))
        data.with_name(data.name + ".meta.json").write_text(
            '{"command": "kiln bench nesting --sweep --json", "date": "2026-11-28", '
            '"machine": "2 cores"}')
        self.write(page("nesting_sweep"))
        self.assertEqual(self.run_figures()[0], 0)
        text = (self.root / "docs/page.md").read_text()
        self.assertIn("| 4 | 0.50 (measured 0.52) | nested | 150.0 | 1.50x (2.00x) | "
                      "1.20x (1.33x) | 99% |", text)
        self.assertIn("| 2 | 0.25 (measured 0.27) | dedicated | 100.0 | 1x | 1x |", text)
        self.assertEqual(text.count("<svg"), 2)  # K = 2 and K = 4
        self.assertIn("stroke-dasharray", text)  # the ideal
        self.assertIn(">nested</text>", text)

    def test_a_change_in_the_data_makes_the_block_stale(self):
        self.with_data()
        self.write(page("chaos_stepping"))
        self.assertEqual(self.run_figures()[0], 0)
        run = self.root / STEPPING / "run-1.json"
        run.write_text(run.read_text().replace('"steps_lost": 0.000', '"steps_lost": 2.000'))
        code, out, _ = self.run_figures("--check")
        self.assertEqual(code, 1)
        self.assertIn("+", out)
        self.assertIn("2 steps lost", " ".join(out.replace("\n+", "\n").split()))

    def test_an_unknown_generator_is_an_error_naming_file_and_line(self):
        self.write(page("no_such_table"))
        code, _, err = self.run_figures("--check")
        self.assertEqual(code, 2)
        self.assertIn("docs/page.md:4", err)
        self.assertIn("no_such_table", err)

    def test_a_missing_data_file_is_an_error_naming_it(self):
        self.with_data()
        (self.root / STEPPING / "run-2.json").unlink()
        self.write(page("chaos_stepping"))
        code, _, err = self.run_figures("--check")
        self.assertEqual(code, 2)
        self.assertIn("docs/page.md:4", err)
        self.assertIn(f"{STEPPING}/run-2.json", err)

    def test_missing_provenance_is_an_error_naming_the_sidecar(self):
        self.with_data()
        (self.root / STEPPING / "meta.json").unlink()
        self.write(page("chaos_stepping"))
        code, _, err = self.run_figures()
        self.assertEqual(code, 2)
        self.assertIn(f"{STEPPING}/meta.json", err)
        self.assertIn("stale", (self.root / "docs/page.md").read_text())   # nothing written

    def test_an_unclosed_block_is_an_error(self):
        self.write("<!-- figures: chaos_stepping -->\ntext\n")
        code, _, err = self.run_figures("--check")
        self.assertEqual(code, 2)
        self.assertIn("docs/page.md:1", err)

    def test_readme_and_nested_pages_are_read(self):
        self.with_data()
        (self.root / "docs" / "sub").mkdir()
        self.write(page("chaos_stepping"), "README.md")
        self.write(page("chaos_stepping"), "docs/sub/page.md")
        code, out, _ = self.run_figures("--check")
        self.assertEqual(code, 1)
        self.assertIn("README.md (block", out)
        self.assertIn("docs/sub/page.md (block", out)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""bench/gen_families.py derives each workload family as documented from a small trace: the same
files and columns, reproducible for a seed, each family changing what it says and nothing else."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
GEN = os.path.join(ROOT, "bench", "gen_families.py")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import gen_families  # noqa: E402

POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"


def trace(directory):
    with open(os.path.join(directory, gen_families.NODES), "w") as f:
        f.write("sn,cpu_milli,memory_mib,gpu,model\n")
        for i in range(40):
            gpus, model = [(8, "G2"), (2, "T4"), (4, "P100"), (0, "")][i % 4]
            f.write(f"node-{i:02d},{32000 * max(1, gpus // 2)},{131072 * max(1, gpus // 2)},{gpus},{model}\n")
    with open(os.path.join(directory, gen_families.PODS), "w") as f:
        f.write(POD_HEADER + "\n")
        for i in range(400):
            num, milli = [(0, 0), (1, 1000), (1, 470), (2, 2000), (1, 1000)][i % 5]
            f.write(f"pod-{i:03d},{4000 * max(1, num)},{8192 * max(1, num)},{num},{milli},,LS,Running,0,1,0\n")


class Families(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.trace = os.path.join(cls.dir.name, "trace")
        os.makedirs(cls.trace)
        trace(cls.trace)
        cls.nodes = gen_families.read(os.path.join(cls.trace, gen_families.NODES))[1]
        cls.pods = gen_families.read(os.path.join(cls.trace, gen_families.PODS))[1]

    def derive(self, family, seed=29, name=None, command_line=False):
        out = os.path.join(self.dir.name, name or family)
        if command_line:
            subprocess.run([sys.executable, GEN, "derive", self.trace, family, out, "--seed", str(seed)], check=True,
                           capture_output=True)
        else:
            gen_families.derive(self.trace, family, out, seed, 1.0)
        header, pods = gen_families.read(os.path.join(out, gen_families.PODS))
        self.assertEqual(",".join(header), POD_HEADER)
        return gen_families.read(os.path.join(out, gen_families.NODES))[1], pods, out

    def test_default_is_the_trace_as_is(self):
        _, _, out = self.derive("default", command_line=True)
        for f in (gen_families.NODES, gen_families.PODS):
            with open(os.path.join(out, f)) as derived, open(os.path.join(self.trace, f)) as original:
                self.assertEqual(derived.read(), original.read())

    def test_every_family_is_reproducible_for_a_seed(self):
        for family in gen_families.FAMILIES:
            a = self.derive(family, 7, family + "-a")
            b = self.derive(family, 7, family + "-b")
            self.assertEqual(a[:2], b[:2], family)
        self.assertNotEqual(self.derive("multi-gpu", 7, "m7")[1], self.derive("multi-gpu", 8, "m8")[1])

    def test_multi_gpu_makes_half_of_the_gpu_pods_ask_2_4_or_8(self):
        _, pods, _ = self.derive("multi-gpu")
        changed = [(a, b) for a, b in zip(self.pods, pods) if a != b]
        gpu_pods = [p for p in self.pods if int(p["num_gpu"]) > 0]
        for _, b in changed:
            self.assertIn(int(b["num_gpu"]), (2, 4, 8))
            self.assertEqual(int(b["gpu_milli"]), 1000 * int(b["num_gpu"]))
        self.assertLessEqual(len(changed), len(gpu_pods) // 2)
        self.assertGreater(len(changed), len(gpu_pods) // 3)

    def test_fractional_makes_every_gpu_pod_a_share(self):
        _, pods, _ = self.derive("fractional")
        for p in pods:
            if int(p["num_gpu"]) > 0:
                self.assertEqual((p["num_gpu"], p["gpu_milli"]), ("1", "470"))
        self.assertEqual(len(pods), len(self.pods))

    def test_cpu_only_pods_far_fewer_or_far_more(self):
        cpu_only = sum(1 for p in self.pods if p["num_gpu"] == "0")
        for family, expected in (("few-cpu", cpu_only // 10), ("many-cpu", 4 * cpu_only)):
            _, pods, _ = self.derive(family)
            self.assertEqual(sum(1 for p in pods if p["num_gpu"] == "0"), expected, family)
            self.assertEqual([p for p in pods if p["num_gpu"] != "0"], [p for p in self.pods if p["num_gpu"] != "0"])
            self.assertEqual(len({p["name"] for p in pods}), len(pods), "names stay unique")

    def test_gpu_model_constrains_a_third_of_the_gpu_pods_to_the_published_model_sets(self):
        nodes, pods, _ = self.derive("gpu-model")
        largest = {}
        for n in nodes:
            largest[n["model"]] = max(largest.get(n["model"], 0), int(n["gpu"]))
        constrained = [p for p in pods if p["gpu_spec"]]
        self.assertEqual(len(constrained), round(sum(1 for p in pods if p["num_gpu"] != "0") / 3))
        published = {frozenset(m for m in s.split("|") if m in largest) for s, _ in gen_families.GPU_SPECS}
        counts = {}
        for p in constrained:
            models = p["gpu_spec"].split("|")
            self.assertEqual(models, sorted(set(models)))
            self.assertIn(frozenset(models), published, p)
            self.assertTrue(any(largest[m] >= int(p["num_gpu"]) for m in models), p)
            counts[p["gpu_spec"]] = counts.get(p["gpu_spec"], 0) + 1
        self.assertTrue(any("|" in s for s in counts), "multi-model sets too")
        self.assertEqual(max(counts, key=counts.get), "T4", "the trace's most named model leads")
        self.assertEqual([p["name"] for p in pods], [p["name"] for p in self.pods])

    def test_small_nodes_splits_half_of_the_8_gpu_nodes_into_2_gpu_ones(self):
        nodes, pods, _ = self.derive("small-nodes")
        count = lambda ns, g: sum(1 for n in ns if int(n["gpu"]) == g)  # noqa: E731
        self.assertEqual(count(nodes, 8), count(self.nodes, 8) - count(self.nodes, 8) // 2)
        self.assertEqual(count(nodes, 2), count(self.nodes, 2) + 4 * (count(self.nodes, 8) // 2))
        self.assertEqual(sum(int(n["gpu"]) for n in nodes), sum(int(n["gpu"]) for n in self.nodes))
        self.assertEqual(pods, self.pods)

    def test_the_table_gives_mean_and_worst_seed_by_family_policy_and_deployment(self):
        lines = ["default gpu-pods binpack 42 80.00", "default gpu-pods binpack 43 90.00",
                 "default every-pod binpack 42 85.00", "multi-gpu gpu-pods spread 42 70.50"]
        self.assertEqual(gen_families.table(lines).splitlines(), [
            "| family | policy | gpu-pods: mean | worst seed | every-pod: mean | worst seed |",
            "|---|---|---|---|---|---|",
            "| default | `binpack` | 85.00% | 80.00% | 85.00% | 85.00% |",
            "| multi-gpu | `spread` | 70.50% | 70.50% |  |  |",
        ])

    def test_the_verdict_holds_the_recommended_policy_to_its_baselines_by_mean_and_seed(self):
        lines = ["default every-pod fragmentation 42 95.00", "default every-pod best-fit 42 94.00",
                 "default every-pod fgd 42 96.00", "default every-pod fragmentation 43 95.00",
                 "default every-pod best-fit 43 93.00", "default every-pod fgd 43 93.50",
                 "default gpu-pods fragmentation 42 80.00", "default gpu-pods binpack 42 80.25",
                 "default gpu-pods spread 42 99.00"]
        self.assertEqual(gen_families.verdict(lines).splitlines(), [
            "| family | deployment | against | mean gap | worst seed gap |",
            "|---|---|---|---|---|",
            "| default | every-pod | max(best-fit, fgd) | +0.25 | -1.00 |",
            "| default | gpu-pods | max(binpack) | -0.25 | -0.25 |",
        ])


if __name__ == "__main__":
    unittest.main()

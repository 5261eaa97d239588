#!/usr/bin/env python3
"""The daemon's scoring settings the chart gives a deployment: the chart's config.scoring, with the
settings of the deployment's placementByRoute entry (everyPod or gpuPods) where config.scoring does
not set them, as the chart's daemonConfig helper fills them in. Prints a daemon configuration
holding only `scoring:`.

usage: bench/chart_scoring.py every-pod|gpu-pods [VALUES_YAML]
"""
import pathlib
import sys

import yaml

ROUTES = {"every-pod": "everyPod", "gpu-pods": "gpuPods"}


def scoring_for(values, deployment):
    scoring = dict(values["config"]["scoring"])
    for key, value in values["placementByRoute"][ROUTES[deployment]].items():
        scoring.setdefault(key, value)
    return scoring


def main(argv):
    if len(argv) not in (2, 3) or argv[1] not in ROUTES:
        sys.exit(__doc__.strip().splitlines()[-1])
    default = pathlib.Path(__file__).resolve().parent.parent / "charts/scheduler-extender/values.yaml"
    values = yaml.safe_load(open(argv[2] if len(argv) == 3 else default))
    yaml.safe_dump({"scoring": scoring_for(values, argv[1])}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv)

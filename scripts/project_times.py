"""The wall time of each course project's sweep on one core, for the course page.

Runs the command of every project of ``book/teaching/course_plan.py`` (:data:`PROJECTS`, at the
quick budget with the seeds the plan computes) as a student would, with one Dask worker
(``--jobs 1``) and one torch thread, in a temporary folder that is deleted afterwards, and writes
its wall seconds, the runs it trained and the machine's load average before and after into
``results/benchmarks/project-times.json`` with provenance (the command, the git commit, the
versions, the hardware, the date). The course page reads the file and names a project whose command
has changed since it was measured. Each project's entry is written as soon as it is timed, so an
interrupted run keeps the projects timed before it. Run it on a quiet machine::

    python scripts/project_times.py                  # every project
    python scripts/project_times.py --projects 3 4   # only some
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = "python scripts/project_times.py"
sys.path.insert(0, str(ROOT / "book" / "teaching"))
sys.path.insert(0, str(ROOT / "scripts"))
import chapter_times  # noqa: E402
import course_plan  # noqa: E402

OUT = course_plan.PROJECT_TIMES


def time_project(project: course_plan.Project, timeout: int) -> dict:
    """Run ``project``'s sweep in a fresh temporary folder, one worker, one thread; its entry."""
    with tempfile.TemporaryDirectory(prefix=f"project-{project.number}-") as folder:
        out = Path(folder) / f"{project.experiment}-project.json"
        command = project.command(str(out), jobs=1)
        entry = {"command": project.command(), "load_before": chapter_times.load_average(),
                 "date": chapter_times._now()}
        start = time.perf_counter()
        done = subprocess.run([sys.executable, *command[1:], "--no-progress"], cwd=folder, capture_output=True,
                              text=True, timeout=timeout, env={**os.environ, **chapter_times.THREADS})
        entry["seconds"] = round(time.perf_counter() - start, 1)
        entry["load_after"] = chapter_times.load_average()
        if done.returncode != 0:
            entry.update(status="failed", error=(done.stderr.strip().splitlines() or [""])[-1][:300])
            return entry
        runs = json.loads(out.read_text(encoding="utf-8"))["runs"]
        entry.update(status="ok", runs=len(runs), seeds=project.seeds())
    return entry


def main(argv: list[str] | None = None) -> int:
    """Command line: time the projects; exit status 0, or 1 where a project's sweep failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    numbers = [project.number for project in course_plan.PROJECTS]
    parser.add_argument("--projects", nargs="+", type=int, choices=numbers, help="only these projects")
    parser.add_argument("--out", type=Path, default=OUT, help=f"the JSON file (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--timeout", type=int, default=7200, help="seconds one project may run (default: 7200)")
    args = parser.parse_args(argv)
    held = course_plan.project_times(args.out) or {"projects": {}}
    if not isinstance(held, dict) or not isinstance(held.get("projects"), dict):
        parser.error(f"--out {args.out} is not a project-times file; pass another --out or delete it yourself")
    failed = False
    for project in course_plan.PROJECTS:
        if args.projects and project.number not in args.projects:
            continue
        entry = time_project(project, args.timeout)
        failed |= entry["status"] != "ok"
        held["projects"][str(project.number)] = entry
        found = chapter_times.provenance()
        found["command"] = [COMMAND.split()[0], *sys.argv]
        held["provenance"] = found
        chapter_times.write_times(held, args.out)
        print(f"project {project.number}: {entry['status']}, {entry['seconds']:.0f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

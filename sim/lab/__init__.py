"""The chapter's lab: checks for a student's Tasks 2-4, and a safe way to run the student's code.

    solutions.py   the reference, in the lab's signatures, built on sim.grpo
    mistakes.py    the common wrong answers, as code, each with its message
    harness.py     call the student's function safely, compare, name the mistake
    checks.py      the cases (chapter numbers, then properties); check_task / check_all / run_case
    probes.py      what the pages ask of the student's functions (advantage table, k3 curve, loss + grad)
    runner.py      Lab: the student's file in a worker process with a time limit; compare(); lab_from_env()
    pool.py        the lab's worker pool (sim.runtime.procs) and the file it runs, from the caller's side (no torch)
    worker.py      what runs in a worker: import the student's file, call, check, probe
    cli.py         python -m sim lab new DIR / check [PATH]

Nothing here is imported by `import sim.lab` itself (this file imports nothing), so the command
line can start the workers before it pays for torch.
"""

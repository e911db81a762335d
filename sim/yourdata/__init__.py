"""A user's own GRPO run and prompt pool, read in the chapter's terms: the file readers (datafile.py), a
run's log and its statistics (runlog.py, runstats.py), the rules that judge it (rules.py), the report
(diagnose.py), the pool's planner (plan.py) and their command lines (cli.py)."""

"""The `grpo-playground` command (cli.py). The engine is the `sim` package and the app's helpers the `ui` package;
an installed copy keeps the app's own files (app.py, pages/, assets/, lab/, .streamlit/) in grpo_playground/app/
(sim/paths.py)."""

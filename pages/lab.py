"""Lab: the chapter's three tasks, their checks, how to run them; with GRPO_LAB_DIR, the checks on that file
(sim/views/lab.py declares the page and its tasks; ui/labpage.py draws it).

The server reads GRPO_LAB_DIR (a directory holding tasks.py, or the file) from its environment:
    GRPO_LAB_DIR=my-lab streamlit run app.py
The student's code runs in a separate worker process with a time limit per task (GRPO_LAB_TIMEOUT
seconds, default 15); its messages are shown as plain text.
"""

from ui.host import page_server
from ui.labpage import lab_page

lab_page(page_server())

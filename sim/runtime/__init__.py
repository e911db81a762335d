"""Work in another process, and writing files safely: the one module that starts processes
(procs.py, with its fork server's preload fork_server.py) and the checks every file a user names goes through
(files.py)."""

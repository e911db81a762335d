# GRPO Playground, served as the README starts it: one `streamlit run app.py` on port 8501.
#
#   docker build -t grpo-playground .
#   docker run --rm -p 8501:8501 grpo-playground                    # one server
#   docker run --rm -p 8501:8501 grpo-playground scripts/serve.sh --replicas 4 --port 8501
#                                                                   # 4 servers behind HAProxy (4+ cores)
#
# For several machines, run one container per machine (one server, or serve.sh --replicas = its cores)
# and put a load balancer with sticky sessions and websockets in front of them: deploy/haproxy.cfg is one,
# with a `server` line per machine (README, "Serving a large class").
FROM python:3.11-slim-bookworm

RUN apt-get update \
    && apt-get install -y --no-install-recommends haproxy curl \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 10001 app
WORKDIR /app
COPY requirements.txt .
# PyTorch's CPU index: torch==2.13.0 resolves to its CPU build (2.13.0+cpu) instead of the multi-GB CUDA one
RUN pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt
COPY --chown=app:app . .

USER app
ENV OMP_NUM_THREADS=1 MALLOC_ARENA_MAX=2 PYTHONUNBUFFERED=1
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s CMD curl -fs http://127.0.0.1:8501/_stcore/health || exit 1
# exec form: the server is PID 1 and gets docker stop's SIGTERM itself
CMD ["python", "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", "8501", \
     "--server.address", "0.0.0.0"]

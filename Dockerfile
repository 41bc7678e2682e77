# Scorpion Race server image: the package and its console scripts, nothing else.

# Build stage: a wheel with the solver's search compiled by mypyc (setup.py), which needs
# a C compiler that the final image does without.
FROM python:3.11-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY protocol ./protocol
COPY server ./server
COPY client ./client
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
COPY --from=build /wheels /wheels
# With the fast extra: uvloop, the event loop the server takes where installed (decision 8).
RUN pip install --no-cache-dir "$(ls /wheels/*.whl)[fast]" && rm -rf /wheels \
    && useradd --system --uid 1000 scorpion
USER scorpion
EXPOSE 8765
# Behind the load balancer: listen on all interfaces of the container network.
CMD ["scorpion-server", "--host", "0.0.0.0", "--port", "8765"]

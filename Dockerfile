# Scorpion Race server image: the package and its console scripts, nothing else.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY protocol ./protocol
COPY server ./server
COPY client ./client
RUN pip install --no-cache-dir . && useradd --system --uid 1000 scorpion
USER scorpion
EXPOSE 8765
# Behind the load balancer: listen on all interfaces of the container network.
CMD ["scorpion-server", "--host", "0.0.0.0", "--port", "8765"]

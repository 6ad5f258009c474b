# The attune worker image (docker-compose.yml builds it): the package with the judge SDKs and the local
# embeddings, installed once at build time, run as an unprivileged user. Worker state goes to the temp dir
# (StreamSettings.datadir); mount a volume there to keep it across container restarts.
FROM python:3.11-slim

WORKDIR /build
COPY pyproject.toml README.md ./
COPY attune ./attune
COPY schemas ./schemas
COPY scorers ./scorers
COPY streams ./streams
RUN pip install --no-cache-dir ".[judges,embeddings]" && cd / && rm -rf /build

RUN useradd --system --uid 10001 --home-dir /var/lib/attune --create-home attune
USER attune
WORKDIR /var/lib/attune
ENV PYTHONUNBUFFERED=1
ENTRYPOINT ["attune"]
CMD ["worker"]

# syntax=docker/dockerfile:1
# iqscore serve as a container: built from this repository, run as a non-root user with OpenBLAS and a health
# check. Build and run (a bank directory mounted read-only, tokens from a file):
#   docker build -t iqscore .
#   docker run -p 8080:8080 -v "$PWD/bank:/srv/iqscore/bank:ro" -e IQSCORE_SCORING_TOKENS=... iqscore
# deploy/compose.yaml runs two instances behind haproxy. Checked by scripts/lint-deploy.sh (hadolint).

# ---- build: the Swift toolchain of the project (6.3 on Debian 12) and the BLAS/LAPACK headers it links
FROM swift:6.3-bookworm AS build
# Not pinned to package versions (DL3008): Debian 12 changes them only for security fixes, and a pinned one
# disappears from the archive when it is superseded; the base images are pinned instead.
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libopenblas-dev liblapacke-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first, so a change to the sources does not fetch them again.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Tests ./Tests
COPY Benchmarks ./Benchmarks
# The Swift standard library and Foundation linked in: the runtime image needs no Swift toolchain.
RUN swift build -c release --product iqscore --static-swift-stdlib \
    && install -D -m 0755 "$(swift build -c release --show-bin-path)/iqscore" /out/iqscore \
    && strip /out/iqscore

# ---- runtime: Debian 12 with the libraries the binary loads (OpenBLAS, LAPACKE, gfortran's runtime) and curl
# for the health check
FROM debian:12.8-slim
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libopenblas0-pthread liblapacke libgfortran5 libstdc++6 curl ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 iqscore \
    && useradd --system --uid 10001 --gid iqscore --home-dir /srv/iqscore --shell /usr/sbin/nologin iqscore
COPY --from=build /out/iqscore /usr/local/bin/iqscore
WORKDIR /srv/iqscore
USER 10001:10001
EXPOSE 8080
# Liveness only: readiness (/readyz) is the load balancer's check, and a draining instance must not be
# restarted for it.
HEALTHCHECK --interval=10s --timeout=2s --start-period=30s --retries=3 \
    CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:8080/livez"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["iqscore", "serve"]
# Listening beyond loopback needs tokens ($IQSCORE_SCORING_TOKENS, $IQSCORE_ADMIN_TOKENS or --tokens FILE), or
# --allow-anonymous. The drain (3 s) outlasts haproxy's check interval (deploy/haproxy.cfg: 250 ms).
CMD ["--host", "0.0.0.0", "--port", "8080", "--bank", "/srv/iqscore/bank/BANK.csv", "--log-format", "json", "--drain-seconds", "3"]

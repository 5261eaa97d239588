# scheduler-extender image: Debian 12 (bookworm-slim), the daemon and its relay
# (scheduler-extender-relay, the every-pod entry's sidecar beside kube-scheduler), as a non-root user.
#
#   docker build -t ghcr.io/scheduler-extender/scheduler-extender:0.1.0 .
#
# A thin shell over the scripts CI runs: the build stage installs the build dependencies with
# scripts/install-deps.sh and builds with `make build` (what `make test` builds first); the runtime
# stage installs the shared libraries with `scripts/install-deps.sh --runtime`. The package lists
# live only in that script.

FROM debian:bookworm-slim AS build
WORKDIR /src
COPY . .
# The test suite and benchmarks are not needed for the image (CI builds and runs them).
RUN scripts/install-deps.sh \
 && make build CMAKE_FLAGS="-DEXTENDER_TESTS=OFF -DEXTENDER_BENCH=OFF" \
 && ./build/scheduler-extender --version \
 && ./build/scheduler-extender-relay --version

FROM debian:bookworm-slim
COPY scripts/install-deps.sh /tmp/install-deps.sh
RUN /tmp/install-deps.sh --runtime \
 && rm -rf /tmp/install-deps.sh /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
COPY --from=build /src/build/scheduler-extender /usr/local/bin/scheduler-extender
COPY --from=build /src/build/scheduler-extender-relay /usr/local/bin/scheduler-extender-relay
# Numeric, so that runAsNonRoot can verify it without an /etc/passwd entry.
USER 65532:65532
# 8888: scheduler-facing (server.listen); 8889: admin (health, metrics, debug).
EXPOSE 8888 8889
ENTRYPOINT ["/usr/local/bin/scheduler-extender"]

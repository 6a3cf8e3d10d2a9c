# nats-server built from its Go module at the version pinned in go.mod, on an
# empty base. Nothing is pulled. Real deployments may use the upstream
# nats image instead (NATS_IMAGE); the arguments below work with both.
#
# Build context (staged by `make images`):
#   nats-server              static binary (CGO_ENABLED=0)
#   passwd, group            the numeric non-root user 65532
#   data/                    an empty directory for the JetStream store
FROM scratch
COPY passwd group /etc/
COPY --chown=65532:65532 data/ /data/
COPY nats-server /nats-server
USER 65532:65532
WORKDIR /data
VOLUME ["/data"]
# 4222: clients; 6222: cluster routes; 8222: monitoring (/healthz).
EXPOSE 4222 6222 8222
ENTRYPOINT ["/nats-server"]
CMD ["--jetstream", "--store_dir", "/data", "--http_port", "8222"]

# The service's image: built in a first stage (all dependencies, the web console and the service
# compiled to plain JavaScript, then the development dependencies pruned), run in a second one
# that holds the built output and the production dependencies only, as the unprivileged `node`
# user. Configuration is by environment only (README, "Configuration"); the embedded database
# lives in the /data volume unless DATABASE_URL names a PostgreSQL server.
FROM node:24-bookworm-slim AS build
WORKDIR /app
# All of it before the install: its postinstall (scripts/word-vectors.ts) reads the sources.
COPY . .
RUN npm ci --no-audit --no-fund
# The console, the service, then a first embedded cluster made and kept beside the packages (a
# new data directory then starts from it instead of running initdb: seconds at first start).
RUN npm run web:build && npm run build && npm prune --omit=dev --no-audit --no-fund \
  && DATA_DIR=/tmp/first LOG_LEVEL=warn node dist/cli.js migrate && rm -rf /tmp/first

FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/api/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]

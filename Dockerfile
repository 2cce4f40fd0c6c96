# duplex-bench for shards on Kubernetes (duplex-bench k8s): Node 20, the compiled kit (dist/) and
# production dependencies only; no TypeScript, no loader at run time.
#   docker build -t duplex-bench .
FROM node:20-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json ./
COPY tools/build.ts ./tools/
COPY apps ./apps
COPY libs ./libs
RUN node --import tsx tools/build.ts

FROM node:20-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY --from=build /src/dist ./dist
ENTRYPOINT ["node", "--min-semi-space-size=16", "--initial-old-space-size=128", "/app/bin/duplex-bench.js"]

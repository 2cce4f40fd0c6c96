# duplex-bench for shards on Kubernetes (duplex-bench k8s): Node 20, production dependencies only.
# The TypeScript sources run through tsx (a dependency), as bin/duplex-bench.js does in the checkout.
#   docker build -t duplex-bench .
FROM node:20-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY tsconfig.base.json ./
COPY bin ./bin
COPY apps ./apps
COPY libs ./libs
ENTRYPOINT ["node", "/app/bin/duplex-bench.js"]

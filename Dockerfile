# mediad: one image for both roles (`serve` and `worker`).
FROM node:20-bookworm-slim AS build
# better-sqlite3 compiles from source when no prebuilt binary is reachable.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc tsconfig.json ./
COPY src ./src
COPY scripts ./scripts
COPY web ./web
# npm ci runs `prepare`, which builds dist/ with tsc and the web application into dist/web with Vite.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
# FFmpeg, and the local intelligence engines: pocketsphinx (speech) and tesseract (OCR).
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg ca-certificates \
      pocketsphinx pocketsphinx-en-us tesseract-ocr tesseract-ocr-eng && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/web ./dist/web
ENV NODE_ENV=production MEDIAD_DATA_DIR=/data MEDIAD_HOST=0.0.0.0 MEDIAD_PORT=8443
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 8443
HEALTHCHECK --interval=15s --timeout=5s CMD node -e "fetch('https://127.0.0.1:8443/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" || exit 1
# The command runs node with its own flags (its #! line).
ENTRYPOINT ["/app/dist/src/cli.js"]
CMD ["serve"]

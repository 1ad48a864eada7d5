#!/usr/bin/env bash
# Build the VS Code extension: npm ci, type-check, bundle, package.
#   editors/vscode/scripts/build.sh            -> editors/vscode/fastedit.vsix
# Needs node >= 20 and npm. vsce packages offline; --no-dependencies because esbuild bundles them.
set -euo pipefail
cd "$(dirname "$0")/.."

npm ci --no-audit --no-fund --loglevel=error
npx --no-install tsc -p ./ --noEmit
npm run --silent bundle
# vsce's flags (in package.json) only warn, but would prompt y/N on a terminal: no stdin.
npm run --silent package </dev/null

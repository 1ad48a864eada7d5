// The `fastedit` settings the user set, as the server's settings object.
//
// package.json declares every server setting (generated from the server's schema by
// scripts/gen_settings.py). Only values the user set are sent, so that the server's other sources
// (FASTEDIT_CONFIG, environment variables) still apply to what is left unset, and `fastedit-lsp
// doctor` shows where each value came from.
import * as vscode from 'vscode';

/** Extension-only settings: never sent to the server (its schema rejects unknown keys). */
const CLIENT_ONLY = ['fastedit.server.', 'fastedit.trace.'];

interface Declared {
  key: string;
  scope?: string;
}

function declared(extension: vscode.Extension<unknown>): Declared[] {
  const properties: Record<string, { scope?: string }> =
    extension.packageJSON?.contributes?.configuration?.properties ?? {};
  return Object.entries(properties)
    .filter(([key]) => key.startsWith('fastedit.') && !CLIENT_ONLY.some((p) => key.startsWith(p)))
    .map(([key, schema]) => ({ key, scope: schema.scope }));
}

/** Whether a configuration change touches settings read only when the server starts. */
export function needsRestart(event: vscode.ConfigurationChangeEvent, extension: vscode.Extension<unknown>): boolean {
  if (event.affectsConfiguration('fastedit.server')) {
    return true;
  }
  return declared(extension).some((d) => d.scope === 'machine' && event.affectsConfiguration(d.key));
}

/**
 * The user's `fastedit` settings as one nested object (camelCase keys, as the server reads them).
 *
 * Machine-scoped settings (the key-routing ones: provider, baseUrl, apiKeyEnv) are read from the
 * user's settings only: a workspace must not be able to send the user's key elsewhere.
 */
export function userSettings(extension: vscode.Extension<unknown>): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration();
  const out: Record<string, unknown> = {};
  for (const { key, scope } of declared(extension)) {
    const seen = config.inspect(key);
    if (seen === undefined) {
      continue;
    }
    const value =
      scope === 'machine'
        ? seen.globalValue
        : (seen.workspaceFolderValue ?? seen.workspaceValue ?? seen.globalValue);
    if (value === undefined || value === null) {
      continue;
    }
    const path = key.slice('fastedit.'.length).split('.');
    let node = out;
    for (const part of path.slice(0, -1)) {
      node = (node[part] ??= {}) as Record<string, unknown>;
    }
    node[path[path.length - 1]] = value;
  }
  return out;
}

/** The server command from `fastedit.server.command` (machine scope: a workspace cannot set it). */
export function serverCommand(): string[] {
  const seen = vscode.workspace.getConfiguration('fastedit').inspect<string[]>('server.command');
  const value = seen?.globalValue ?? seen?.defaultValue;
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')
    ? value
    : ['fastedit-lsp'];
}

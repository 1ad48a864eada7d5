// What the extension says in words: a job's figures for the status bar and the message shown when
// the server cannot start. Pure (no `vscode` import), so the build test runs it under plain Node.

/** The parts of a job record the figures come from. */
export interface FigureSource {
  state: string;
  route?: string | null;
  metrics?: { ttftMs?: number | null; tokens?: number; tokensPerSecond?: number | null; elapsedMs?: number; landedMs?: number | null };
}

/** The parts of a job record its end message comes from. */
export interface EndSource extends FigureSource {
  kind?: string;
  reason?: string | null;
  metrics?: FigureSource['metrics'] & { edits?: number };
}

const TITLES: Record<string, string> = {
  completeRest: 'Complete the rest',
  generateRegex: 'Generate regex',
  generateTests: 'Write tests',
  fixSyntax: 'Fix syntax',
  editSelection: 'Edit selection',
  run: 'Action',
};

/**
 * What a job that ended with no edit says (the status bar's figures alone said nothing):
 * `Fast Edit: Complete the rest: no suggestion: why`, the why the reason's last step. Undefined
 * for any other job (a failure the server says itself, an edit is seen in the buffer).
 */
export function noSuggestionText(job: EndSource): string | undefined {
  if (job.state !== 'done' || (job.metrics?.edits ?? 0) !== 0) {
    return undefined;
  }
  const steps = (job.reason ?? '').split('; ');
  const why = steps[steps.length - 1].replace(/^no suggestion:?\s*/, '');
  const title = TITLES[job.kind ?? ''] ?? job.kind ?? 'job';
  return `Fast Edit: ${title}: no suggestion${why ? `: ${why}` : ''}`;
}

/** 1234.5 -> "1,235". */
function thousands(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/**
 * A job's figures as the server's record has them: `300 tok/s · first token 323 ms` for a model
 * (its decode speed, with the wait for its first token apart), `offline · 12 ms` for the offline
 * engine, which has no speed. Undefined when there is nothing to show yet.
 */
export function figuresText(job: FigureSource): string | undefined {
  const m = job.metrics ?? {};
  const running = job.state === 'running';
  if (job.route === 'local') {
    if (running) {
      return 'offline · …';
    }
    // The time to the text in the buffer, not the job's wait for the editor's report of it.
    const shown = typeof m.landedMs === 'number' ? m.landedMs : m.elapsedMs;
    return typeof shown === 'number' ? `offline · ${thousands(shown)} ms` : undefined;
  }
  const parts: string[] = [];
  if (typeof m.tokensPerSecond === 'number' && m.tokensPerSecond > 0) {
    parts.push(`${thousands(m.tokensPerSecond)} tok/s`);
  } else if (running && (m.tokens ?? 0) > 0) {
    parts.push(`${m.tokens} tokens`);
  }
  if (typeof m.ttftMs === 'number') {
    parts.push(`first token ${thousands(m.ttftMs)} ms`);
  }
  return parts.length > 0 ? parts.join(' · ') : undefined;
}

/** The setting naming the server command (machine-scoped). */
export const COMMAND_SETTING = 'fastedit.server.command';

/** What went wrong starting the server, in words, and where to fix it. */
export interface StartFailure {
  /** The whole message (without the "Fast Edit: " prefix VS Code's notification adds). */
  message: string;
  /** The command was not found (spawn ENOENT): the setting is the fix. */
  notFound: boolean;
  /** Where to set it: "Remote" when the window is remote (its machine settings), else "User". */
  settingsTab: 'Remote' | 'User';
}

/**
 * The message for a server that did not start.
 *
 * `error` is what vscode-languageclient rejected with ("Launching server using command
 * fastedit-lsp failed. Error: spawn fastedit-lsp ENOENT", a string); `remoteName` is
 * `vscode.env.remoteName` (`ssh-remote`, `wsl`, `dev-container`, ..., undefined locally). In a
 * remote window (code-server, Remote-SSH, WSL, Dev Containers) VS Code ignores machine-scoped
 * settings from the User settings: `fastedit.server.command` must be set in the Remote tab, the
 * settings of the machine where the server runs. `found`: whether the program exists (undefined:
 * not looked up).
 */
export function startFailure(
  command: string[],
  error: unknown,
  remoteName: string | undefined,
  found?: boolean,
): StartFailure {
  const detail = String((error as { message?: unknown } | undefined)?.message ?? error);
  // vscode-languageclient may reject before node's spawn error arrives, without the reason:
  // `found` (the program looked up on the PATH) tells then.
  const notFound = /\bENOENT\b/.test(detail) || found === false;
  const remote = remoteName !== undefined && remoteName !== '';
  const settingsTab = remote ? 'Remote' : 'User';
  const shown = JSON.stringify(command);
  const where = remote
    ? `in the Settings editor's Remote [${remoteName}] tab (this is a remote window: VS Code ignores ` +
      `${COMMAND_SETTING} in your User settings here, it is machine-scoped)`
    : `in your User settings (in a remote window, such as code-server or Remote-SSH, in the ` +
      `Settings editor's Remote tab instead: a value in your User settings is ignored there)`;
  const message = notFound
    ? `the server command ${shown} was not found (${/spawn \S+ ENOENT/.exec(detail)?.[0] ?? detail}). ` +
      `Install the server (pip install fastedit-lsp), then set ${COMMAND_SETTING} to its full path, ` +
      `e.g. ["/home/me/.venvs/fastedit/bin/fastedit-lsp"], ${where}.`
    : `could not start ${shown}: ${detail}. Check ${COMMAND_SETTING} ${where}.`;
  return { message, notFound, settingsTab };
}

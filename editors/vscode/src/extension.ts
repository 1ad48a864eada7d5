// Fast Edit for VS Code: starts fastedit-lsp over stdio and adds the palette commands, the
// fast-mode key, the status bar item and one undo step per streamed job.
//
// The server's own command ids (`fastedit.*`) are registered as VS Code commands by
// vscode-languageclient; the palette commands here (`fastedit-vscode.*`) call them with the active
// editor's document, cursor and selection.
import * as fs from 'fs';
import * as vscode from 'vscode';
import * as path from 'path';
import {
  ClientCapabilities,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  State,
  StaticFeature,
} from 'vscode-languageclient/node';
import { JobEdits } from './edits';
import { NextEdits } from './nextEdit';
import { needsRestart, serverCommand, userSettings } from './settings';
import { Profiles, StatusItem, StatusParams } from './status';
import { COMMAND_SETTING, noSuggestionText, startFailure } from './text';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const extension = context.extension;
  const trace = tracer(process.env.FASTEDIT_VSCODE_LOG);
  // Every message shown is traced too (`message`: where, and the text as shown), so what the
  // user was told can be read after a status-bar message is gone (they last a few seconds).
  const say = {
    status: (text: string, ms: number): void => {
      trace('message', { where: 'statusBar', text });
      vscode.window.setStatusBarMessage(text, ms);
    },
    info: (text: string): Thenable<string | undefined> => {
      trace('message', { where: 'information', text });
      return vscode.window.showInformationMessage(text);
    },
    warning: (text: string): Thenable<string | undefined> => {
      trace('message', { where: 'warning', text });
      return vscode.window.showWarningMessage(text);
    },
    error: (text: string, ...items: string[]): Thenable<string | undefined> => {
      trace('message', { where: 'error', text });
      return vscode.window.showErrorMessage(text, ...items);
    },
  };
  const status = new StatusItem('fastedit-vscode.toggleFastMode');
  const edits = new JobEdits(() => client, trace);
  /** The jobs whose end was said already (a job's last status may come twice). */
  const ended = new Set<string>();
  context.subscriptions.push(status, edits);

  const execute = async (command: string, args: unknown[] = []): Promise<any> => {
    if (client === undefined || !client.isRunning()) {
      throw new Error('the Fast Edit server is not running (Fast Edit: Restart Server)');
    }
    try {
      const result = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
      trace('command', { command, arguments: args, result });
      return result;
    } catch (error) {
      trace('command', { command, arguments: args, error: String((error as Error).message ?? error) });
      throw error;
    }
  };

  const refreshProfiles = async (): Promise<void> => {
    const reply = (await execute('fastedit.status')) as { profiles?: Profiles };
    status.setProfiles(reply.profiles ?? {});
  };

  const start = async (): Promise<void> => {
    const [command, ...args] = serverCommand();
    const options: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      initializationOptions: userSettings(extension),
      middleware: {
        window: {
          // The test module the server creates for Write Tests opens pinned: a preview editor
          // would replace the source's preview tab (a file opened with one click), and VS Code
          // then closes the source document, which stops the job ("the document was closed").
          showDocument: async (params, _token, next) => {
            if (params.external === true) {
              return next(params, _token);
            }
            try {
              const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(params.uri));
              await vscode.window.showTextDocument(document, {
                preview: false,
                preserveFocus: params.takeFocus !== true,
                selection: params.selection && client?.protocol2CodeConverter.asRange(params.selection),
              });
              return { success: true };
            } catch {
              return { success: false };
            }
          },
        },
        workspace: {
          handleApplyEdit: (params, next) => edits.handle(params, next),
          // The server pulls `fastedit`: answer with what the user set, without the
          // extension-only settings (`server.*`, `trace.*`) its schema does not know.
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) {
              return answers;
            }
            return params.items.map((item, i) => (item.section === 'fastedit' ? userSettings(extension) : answers[i]));
          },
        },
      },
    };
    // `transport` is left unset on purpose: it is still stdio, but TransportKind.stdio would
    // append `--stdio` to the user's command.
    const executable = { command, args };
    const next = new LanguageClient('fastedit', 'Fast Edit', { run: executable, debug: executable }, options);
    next.registerFeature(STATUS_OPT_IN);
    next.onNotification('fastedit/status', (params: StatusParams) => {
      trace('status', params);
      if (params.job !== undefined) {
        edits.jobChanged(params.job);
        // Every job's end says something: one with no suggestion says why (once).
        const said = noSuggestionText(params.job);
        if (said !== undefined && !ended.has(params.job.jobId)) {
          ended.add(params.job.jobId);
          say.status(said, 8000);
        }
      }
      status.update(params);
    });
    next.onDidChangeState((e) => {
      if (e.newState === State.Stopped) {
        status.setProblem('the server stopped (Fast Edit: Restart Server)');
      }
    });
    client = next;
    edits.reset();
    ended.clear(); // job ids start again with each server
    try {
      await next.start();
    } catch (error) {
      const failure = startFailure([command, ...args], error, vscode.env.remoteName, programExists(command));
      trace('startFailure', failure);
      status.setProblem(failure.message);
      const open = failure.settingsTab === 'Remote' ? 'Open Remote Settings' : 'Open User Settings';
      void say.error(`Fast Edit: ${failure.message}`, open).then((choice) => {
        if (choice === open) {
          const which = failure.settingsTab === 'Remote' ? 'workbench.action.openRemoteSettings' : 'workbench.action.openSettings';
          void vscode.commands.executeCommand(which, COMMAND_SETTING);
        }
      });
      return;
    }
    await refreshProfiles().catch(() => undefined);
  };

  const restart = async (): Promise<void> => {
    const old = client;
    client = undefined;
    await old?.stop().catch(() => undefined);
    await start();
  };

  /** The jobs that leave the cursor after the text they write (unless the user moves it). */
  const FOLLOWING = new Set(['fastedit.completeRest', 'fastedit.generateRegex']);

  /** Run one of the server's job commands on the active editor. */
  const job = (command: string, args: (editor: vscode.TextEditor, c: LanguageClient) => Promise<object | undefined>) => {
    return async (): Promise<void> => {
      const editor = vscode.window.activeTextEditor;
      if (editor === undefined || client === undefined) {
        void say.warning('Fast Edit: open a file first.');
        return;
      }
      const argument = await args(editor, client);
      if (argument === undefined) {
        return;
      }
      if (FOLLOWING.has(command)) {
        edits.follow(editor);
      }
      await execute(command, [argument]).catch((error: Error) => {
        void say.error(`Fast Edit: ${error.message ?? error}`);
      });
    };
  };
  const uri = (e: vscode.TextEditor, c: LanguageClient) => c.code2ProtocolConverter.asUri(e.document.uri);
  const atCursor = async (e: vscode.TextEditor, c: LanguageClient) => ({
    uri: uri(e, c),
    position: c.code2ProtocolConverter.asPosition(e.selection.active),
  });
  const selection = async (e: vscode.TextEditor, c: LanguageClient) => ({
    uri: uri(e, c),
    range: c.code2ProtocolConverter.asRange(e.selection),
  });

  const register = (id: string, handler: () => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, handler));
  register('fastedit-vscode.toggleFastMode', async () => {
    try {
      const reply = (await execute('fastedit.toggleFastMode')) as { mode: string };
      status.update({ mode: reply.mode });
    } catch (error) {
      void say.error(`Fast Edit: ${(error as Error).message ?? error}`);
    }
  });
  register('fastedit-vscode.setMode', async () => {
    const mode = await vscode.window.showQuickPick(
      [
        { label: 'fast', description: 'every job goes to the fast profile' },
        { label: 'standard', description: 'every job goes to the standard profile' },
        { label: 'auto', description: 'each job is routed by its difficulty' },
      ],
      { title: 'Fast Edit: mode' },
    );
    if (mode !== undefined) {
      const reply = (await execute('fastedit.setMode', [{ mode: mode.label }])) as { mode: string };
      status.update({ mode: reply.mode });
    }
  });
  register('fastedit-vscode.completeRest', job('fastedit.completeRest', atCursor));
  register('fastedit-vscode.generateTests', job('fastedit.generateTests', atCursor));
  register('fastedit-vscode.generateRegex', job('fastedit.generateRegex', selection));
  register('fastedit-vscode.fixSyntax', job('fastedit.fixSyntax', selection));
  register(
    'fastedit-vscode.editSelection',
    job('fastedit.editSelection', async (e, c) => {
      const instruction = await vscode.window.showInputBox({
        title: 'Fast Edit: edit selection',
        prompt: e.selection.isEmpty ? 'How should the current line change?' : 'How should the selection change?',
        placeHolder: 'e.g. add type hints',
        ignoreFocusOut: true,
        validateInput: (value) => (value.trim() ? undefined : 'Say what to change'),
      });
      if (!instruction?.trim()) {
        return undefined;
      }
      // An empty selection means the current line.
      const range = e.selection.isEmpty ? e.document.lineAt(e.selection.active.line).range : e.selection;
      return { uri: uri(e, c), range: c.code2ProtocolConverter.asRange(range), instruction };
    }),
  );
  // A user-defined action (setting fastedit.actions) or a preset: picked from a quick pick, or
  // given as the command's argument by a keybinding ({"command": "fastedit-vscode.runAction",
  // "args": "docstring"}). On the selection when there is one, else at the cursor.
  const presets = [
    { id: 'docstring', title: 'Add a docstring' },
    { id: 'typeHints', title: 'Add type hints' },
  ];
  register('fastedit-vscode.runAction', async (given?: unknown) => {
    let id = typeof given === 'string' ? given : undefined;
    if (id === undefined) {
      const configured = vscode.workspace.getConfiguration('fastedit').get<{ id: string; title: string }[]>('actions') ?? [];
      const ids = new Set(configured.map((a) => a.id));
      const items = [...configured, ...presets.filter((p) => !ids.has(p.id))].map((a) => ({
        label: a.title,
        description: a.id,
      }));
      const picked = await vscode.window.showQuickPick(items, { title: 'Fast Edit: run an action' });
      id = picked?.description;
    }
    if (id === undefined) {
      return;
    }
    const action = id;
    await job('fastedit.run', async (e, c) =>
      e.selection.isEmpty
        ? { action, uri: uri(e, c), position: c.code2ProtocolConverter.asPosition(e.selection.active) }
        : { action, uri: uri(e, c), range: c.code2ProtocolConverter.asRange(e.selection) },
    )();
  });
  register('fastedit-vscode.cancel', async () => {
    const editor = vscode.window.activeTextEditor;
    const argument = editor && client ? [{ uri: uri(editor, client) }] : [];
    const reply = (await execute('fastedit.cancel', argument)) as { cancelled: string[] };
    say.status(`Fast Edit: cancelled ${reply.cancelled.length} job(s)`, 3000);
  });
  register('fastedit-vscode.revert', async () => {
    const editor = vscode.window.activeTextEditor;
    const argument = editor && client ? [{ uri: uri(editor, client) }] : [];
    const reply = (await execute('fastedit.revert', argument)) as { reverted: boolean; reason?: string };
    if (!reply.reverted) {
      void say.info(`Fast Edit: nothing reverted: ${reply.reason ?? 'no job'}`);
    } else {
      say.status('Fast Edit: reverted', 5000);
    }
  });
  register('fastedit-vscode.showStatus', async () => {
    const reply = await execute('fastedit.status');
    client?.outputChannel.info(`fastedit.status\n${JSON.stringify(reply, null, 2)}`);
    client?.outputChannel.show(true);
  });
  register('fastedit-vscode.restartServer', restart);
  const nextEdits = new NextEdits(() => client, execute);
  context.subscriptions.push(nextEdits);
  register('fastedit-vscode.acceptNextEdit', () => nextEdits.accept());
  register('fastedit-vscode.dismissNextEdit', () => nextEdits.dismiss());
  register('fastedit-vscode.nextEditShown', () => nextEdits.current());
  register('fastedit-vscode.toggleNextEdit', async () => {
    const enabled = await nextEdits.toggle();
    say.status(`Fast Edit: next-edit suggestions ${enabled ? 'on' : 'off'}`, 3000);
  });

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration('fastedit')) {
        return;
      }
      if (needsRestart(event, extension)) {
        await restart();
      } else if (client?.isRunning()) {
        // `settings: null` makes the server pull the section (answered by the middleware above).
        await client.sendNotification('workspace/didChangeConfiguration', { settings: null });
        await refreshProfiles().catch(() => undefined);
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}

/**
 * Opts in to the server's `fastedit/*` notifications: the server sends them only to a client
 * declaring `experimental.fastedit.statusNotification` (initializationOptions would not do).
 */
const STATUS_OPT_IN: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, fastedit: { statusNotification: true } };
  },
  initialize: () => undefined,
  getState: () => ({ kind: 'static' }),
  clear: () => undefined,
};

/** Whether `program` exists: a path as given, a bare name on the PATH (undefined: cannot tell). */
function programExists(program: string): boolean | undefined {
  if (process.platform === 'win32') {
    return undefined; // PATHEXT and friends: leave it to the spawn error
  }
  if (program.includes(path.sep)) {
    return fs.existsSync(program);
  }
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((d) => d !== '');
  return dirs.some((dir) => fs.existsSync(path.join(dir, program)));
}

/**
 * With FASTEDIT_VSCODE_LOG set, every status notification, command reply, streamed edit and
 * message shown is appended to that file as a JSON line (for troubleshooting, and read by the
 * end-to-end test).
 */
function tracer(path: string | undefined): (event: string, data: unknown) => void {
  if (!path) {
    return () => undefined;
  }
  return (event, data) => fs.appendFileSync(path, JSON.stringify({ event, data }) + '\n');
}

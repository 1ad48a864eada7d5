// Next-edit suggestions in VS Code with the stable API only: after a change, ask fastedit
// (`fastedit.nextEdit`) for the edit the user will make next and show it where it would apply:
// the replaced text struck through, the new text as an `after` decoration, the whole of it in a
// hover (for added lines). While one is shown the context key `fastedit.nextEditVisible` is set,
// so Tab accepts it (bound only when no inline suggestion or suggest widget is showing) and
// Escape dismisses it. Nothing is applied without the key; an accepted suggestion is one undo
// step, applied only to the document version it was made for.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';

interface WireEdit {
  text: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  textDocument: { uri: string; version: number };
  command?: { command: string; arguments?: unknown[] };
}

interface Shown {
  editor: vscode.TextEditor;
  version: number;
  range: vscode.Range;
  text: string;
  id?: unknown;
}

const CONTEXT = 'fastedit.nextEditVisible';
/** Shown after the suggestion: the key bound to accepting it (package.json) while it shows. */
export const ACCEPT_HINT = '[Tab accepts]';

export class NextEdits implements vscode.Disposable {
  private readonly struck = vscode.window.createTextEditorDecorationType({
    textDecoration: 'line-through',
    opacity: '0.6',
    backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
  });
  private readonly added = vscode.window.createTextEditorDecorationType({
    after: {
      color: new vscode.ThemeColor('editorGhostText.foreground'),
      backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
    },
  });
  private shown: Shown | undefined;
  private timer: NodeJS.Timeout | undefined;
  private enabled = true;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly execute: (command: string, args?: unknown[]) => Promise<any>,
    private readonly delayMs = 150,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeTextDocument((event) => {
        const editor = vscode.window.activeTextEditor;
        if (editor === undefined || event.document !== editor.document || event.contentChanges.length === 0) {
          return;
        }
        this.clear();
        this.schedule(editor);
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.clear()),
    );
  }

  /** The suggestion shown, for the end-to-end test (`fastedit-vscode.nextEditShown`). */
  current(): { line: number; text: string } | undefined {
    return this.shown && { line: this.shown.range.start.line, text: this.shown.text };
  }

  private schedule(editor: vscode.TextEditor): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    if (!this.enabled) {
      return;
    }
    this.timer = setTimeout(() => void this.request(editor), this.delayMs);
  }

  async request(editor: vscode.TextEditor): Promise<void> {
    const c = this.client();
    if (c === undefined || !c.isRunning() || editor.document.isClosed) {
      return;
    }
    const version = editor.document.version;
    const argument = {
      uri: c.code2ProtocolConverter.asUri(editor.document.uri),
      position: c.code2ProtocolConverter.asPosition(editor.selection.active),
    };
    let reply: { edits?: WireEdit[] };
    try {
      reply = await this.execute('fastedit.nextEdit', [argument]);
    } catch {
      return;
    }
    const edit = reply?.edits?.[0];
    if (edit === undefined || editor.document.version !== version || vscode.window.activeTextEditor !== editor) {
      return; // nothing, or made for a version the user has typed past
    }
    const range = c.protocol2CodeConverter.asRange(edit.range);
    this.show({ editor, version, range, text: edit.text, id: edit.command?.arguments?.[0] });
  }

  private show(shown: Shown): void {
    this.clear();
    this.shown = shown;
    const [first, ...rest] = shown.text.split('\n');
    const hover = new vscode.MarkdownString();
    hover.appendText('Next edit (Tab to accept, Escape to dismiss):');
    hover.appendCodeblock(shown.text, shown.editor.document.languageId);
    if (!shown.range.isEmpty) {
      shown.editor.setDecorations(this.struck, [{ range: shown.range, hoverMessage: hover }]);
    }
    const shownText = rest.length ? `${first} ⏎ ${rest.join(' ⏎ ')}` : first;
    shown.editor.setDecorations(this.added, [
      {
        range: new vscode.Range(shown.range.end, shown.range.end),
        hoverMessage: hover,
        // The key that accepts it, shown with it (as in Emacs and Neovim), not only in the hover.
        renderOptions: { after: { contentText: `${shownText}  ${ACCEPT_HINT}` } },
      },
    ]);
    void vscode.commands.executeCommand('setContext', CONTEXT, true);
  }

  clear(): void {
    if (this.shown !== undefined) {
      this.shown.editor.setDecorations(this.struck, []);
      this.shown.editor.setDecorations(this.added, []);
      this.shown = undefined;
      void vscode.commands.executeCommand('setContext', CONTEXT, false);
    }
  }

  /** Apply the suggestion shown (one undo step) and tell the server. */
  async accept(): Promise<boolean> {
    const shown = this.shown;
    this.clear();
    if (shown === undefined || shown.editor.document.version !== shown.version) {
      return false;
    }
    const applied = await shown.editor.edit((builder) => builder.replace(shown.range, shown.text), {
      undoStopBefore: true,
      undoStopAfter: true,
    });
    if (applied) {
      const end = shown.editor.document.positionAt(shown.editor.document.offsetAt(shown.range.start) + shown.text.length);
      shown.editor.selection = new vscode.Selection(end, end);
      if (shown.id !== undefined) {
        await this.execute('fastedit.acceptNextEdit', [shown.id]).catch(() => undefined);
      }
    }
    return applied;
  }

  async dismiss(): Promise<void> {
    const shown = this.shown;
    this.clear();
    if (shown?.id !== undefined) {
      await this.execute('fastedit.dismissNextEdit', [shown.id]).catch(() => undefined);
    }
  }

  async toggle(): Promise<boolean> {
    const reply = (await this.execute('fastedit.toggleNextEdit')) as { enabled: boolean };
    this.enabled = reply.enabled;
    if (!this.enabled) {
      this.clear();
    }
    return this.enabled;
  }

  dispose(): void {
    this.clear();
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    this.struck.dispose();
    this.added.dispose();
    this.subscriptions.forEach((s) => s.dispose());
  }
}

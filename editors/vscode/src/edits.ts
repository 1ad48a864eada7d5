// workspace/applyEdit for streamed jobs: one job, one undo step.
//
// VS Code applies each workspace/applyEdit as its own undo step, so a job streamed in 40 edits
// would need 40 undos. Edits that target one visible document are applied here instead, with
// TextEditor.edit and undo stops only around the job: the first edit of a job (or the first after
// the user typed) opens an undo step, the job's later edits join it. VS Code's own typing starts
// a new undo step after a change it did not make itself, so the user's typing never joins a job's
// step, and a job edit that follows the user's typing opens a new step: undo never removes the
// user's typing together with the job's text (one undo step per job, never with the typing).
import * as vscode from 'vscode';
import {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditRequest,
  ApplyWorkspaceEditResult,
  CancellationToken,
  ResponseError,
  LanguageClient,
  TextDocumentEdit,
  TextEdit,
} from 'vscode-languageclient/node';

/** What a `fastedit/status` notification says about a job (the parts used here). */
export interface JobRecord {
  jobId: string;
  kind: string;
  state: string;
  uri: string;
  route?: string | null;
  model?: string | null;
  reason?: string | null;
  error?: string | null;
  metrics?: {
    ttftMs?: number | null;
    tokens?: number;
    tokensPerSecond?: number | null;
    edits?: number;
    elapsedMs?: number;
    landedMs?: number | null;
  };
  verification?: { ok: boolean | null; details?: string };
}

/** A job whose draft landed although it failed verification (the server marks it with a diagnostic). */
export function isUnverified(job: JobRecord | undefined): boolean {
  return job?.state === 'done' && job.verification?.ok === false && (job.metrics?.edits ?? 0) > 0;
}

interface DocumentState {
  /** Running jobs on the document. */
  running: Set<string>;
  /**
   * Whether the document's last change was a job edit of the current run of jobs. Set from the
   * change events, in their order: a keystroke whose event arrives while a job edit is awaited
   * must not be forgotten when the edit's reply comes.
   */
  joinable: boolean;
  /** Job edits sent to the editor whose change event has not come back yet. */
  echoes: { start: vscode.Position; text: string }[];
}

/**
 * How many times an edit is tried: TextEditor.edit refuses an edit when the user typed between
 * its building (in the extension host) and its applying (in the editor), and each keystroke can
 * make one attempt fail.
 */
const RETRIES = 20;

export class JobEdits implements vscode.Disposable {
  private readonly documents = new Map<string, DocumentState>();
  /**
   * Per document: where a job that moves the cursor (complete the rest, regex) last left it. The
   * cursor goes after the text the job writes, unless the user moved it meanwhile.
   */
  private readonly follows = new Map<string, vscode.Position>();
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly trace: (event: string, data: unknown) => void,
  ) {
    this.subscriptions = [
      vscode.workspace.onDidChangeTextDocument((e) => this.changed(e)),
      // Traced while a job runs: who moved the cursor (kind: undefined for an edit).
      vscode.window.onDidChangeTextEditorSelection((e) => {
        const uri = e.textEditor.document.uri.toString();
        if ((this.documents.get(uri)?.running.size ?? 0) > 0) {
          const { line, character } = e.selections[0].active;
          this.trace('selection', { uri, kind: e.kind, line, character });
        }
      }),
    ];
  }

  dispose(): void {
    this.subscriptions.forEach((s) => s.dispose());
  }

  /** Make `editor`'s cursor follow the text of the job about to start on its document. */
  follow(editor: vscode.TextEditor): void {
    this.follows.set(editor.document.uri.toString(), editor.selection.active);
  }

  /** Follow jobs through `fastedit/status` (sent before a job's first edit and after its last). */
  jobChanged(job: JobRecord): void {
    const uri = vscode.Uri.parse(job.uri).toString();
    const state = this.state(uri);
    if (job.state === 'running') {
      if (state.running.size === 0) {
        state.joinable = false;
      }
      state.running.add(job.jobId);
    } else {
      state.running.delete(job.jobId);
      if (state.running.size === 0) {
        state.echoes = []; // an edit that changed nothing has no echo
        this.follows.delete(uri);
      }
    }
  }

  /** Reset when the server (re)starts: its jobs are gone. */
  reset(): void {
    this.documents.clear();
  }

  /** The `workspace.handleApplyEdit` middleware. */
  async handle(
    params: ApplyWorkspaceEditParams,
    next: ApplyWorkspaceEditRequest.HandlerSignature,
  ): Promise<ApplyWorkspaceEditResult | ResponseError<void>> {
    const target = this.singleDocument(params);
    const client = this.client();
    const editor =
      target && client
        ? vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === target.uri)
        : undefined;
    if (!target || !client || !editor) {
      return next(params, CancellationToken.None);
    }
    const state = this.state(target.uri);
    const document = editor.document;
    if (target.version !== null && target.version !== document.version) {
      return { applied: false, failureReason: 'the document changed since the server saw it' };
    }
    const inJob = state.running.size > 0;
    const edits = target.edits.map((e) => ({
      range: client.protocol2CodeConverter.asRange(e.range),
      text: e.newText,
    }));
    // The cursor follows this edit if it is where the job last left it (the user did not move it).
    const followed = this.follows.get(target.uri);
    const following =
      followed !== undefined && editor.selection.isEmpty && editor.selection.active.isEqual(followed);
    if (!following) {
      this.follows.delete(target.uri);
    }
    const before = edits.map((e) => ({
      start: document.offsetAt(e.range.start),
      end: document.offsetAt(e.range.end),
      text: e.text,
    }));
    const cursorBefore = document.offsetAt(editor.selection.active);
    let applied = false;
    let undoStopBefore = !(inJob && state.joinable);
    for (let attempt = 0; attempt < RETRIES && !applied; attempt++) {
      // A refused attempt means the user typed since: the edit then starts a new undo step.
      undoStopBefore ||= attempt > 0;
      const echoes = edits.map((e) => ({ start: e.range.start, text: e.text }));
      state.echoes.push(...echoes);
      try {
        applied = await editor.edit(
          (builder) => edits.forEach((e) => builder.replace(e.range, e.text)),
          { undoStopBefore, undoStopAfter: !inJob },
        );
      } catch {
        // The editor was closed meanwhile: VS Code applies the edit to the document.
        state.echoes = state.echoes.filter((e) => !echoes.includes(e));
        return next(params, CancellationToken.None);
      }
      if (!applied) {
        state.echoes = state.echoes.filter((e) => !echoes.includes(e));
        // A versioned edit must not land on text the server has not seen.
        if (target.version !== null) {
          break;
        }
      }
    }
    let cursor: 'followed' | 'moved' | 'left' | undefined;
    if (applied && following) {
      // The user may have moved the cursor while the edit was on its way (editor.edit is
      // asynchronous): it follows only if it is where the edit alone would have left it.
      const now = editor.document.offsetAt(editor.selection.active);
      const where = cursorAfter(cursorBefore, before);
      if (editor.selection.isEmpty && now >= where.min && now <= where.max) {
        cursor = this.moveFollower(editor, target.uri, before) ? 'moved' : 'followed';
      } else {
        this.follows.delete(target.uri);
        cursor = 'left';
      }
    }
    this.trace('applyEdit', { uri: target.uri, undoStopBefore, inJob, applied, cursor });
    return applied ? { applied } : { applied, failureReason: 'the editor refused the edit' };
  }

  /**
   * Put the cursor after the text of the last of `edits` (offsets before they applied), on its
   * last line; an edit that ends before the cursor (an import above) leaves it where it is.
   * Whether the cursor was moved: setting the selection is asynchronous too, and reaches the
   * editor after whatever the user did meanwhile, so it is set only when the edit did not leave
   * the cursor there already (text inserted at the cursor moves it, as the stream's tokens do).
   */
  private moveFollower(
    editor: vscode.TextEditor,
    uri: string,
    edits: { start: number; end: number; text: string }[],
  ): boolean {
    const sorted = [...edits].sort((a, b) => a.start - b.start);
    let delta = 0;
    let end = -1;
    for (const e of sorted) {
      end = e.start + delta + e.text.replace(/\r?\n$/, '').length;
      delta += e.text.length - (e.end - e.start);
    }
    const cursor = editor.document.offsetAt(editor.selection.active);
    const moved = end > cursor;
    if (end >= cursor) {
      const position = editor.document.positionAt(end);
      if (moved) {
        editor.selection = new vscode.Selection(position, position);
      }
      editor.revealRange(new vscode.Range(position, position));
    }
    this.follows.set(uri, editor.selection.active);
    return moved;
  }

  private state(uri: string): DocumentState {
    let state = this.documents.get(uri);
    if (state === undefined) {
      state = { running: new Set(), joinable: false, echoes: [] };
      this.documents.set(uri, state);
    }
    return state;
  }

  /** A change that is not the echo of a job edit (the user typed, undid, formatted…). */
  private changed(event: vscode.TextDocumentChangeEvent): void {
    const state = this.documents.get(event.document.uri.toString());
    if (state === undefined || event.contentChanges.length === 0) {
      return;
    }
    for (const change of event.contentChanges) {
      const i = state.echoes.findIndex((e) => e.text === change.text && e.start.isEqual(change.range.start));
      if (i >= 0) {
        state.echoes.splice(i, 1);
        state.joinable = state.running.size > 0;
      } else {
        state.joinable = false;
      }
    }
  }

  /** The edit's document, version and text edits when it edits exactly one document's text. */
  private singleDocument(
    params: ApplyWorkspaceEditParams,
  ): { uri: string; version: number | null; edits: TextEdit[] } | undefined {
    const { changes, documentChanges } = params.edit;
    if (documentChanges !== undefined) {
      if (changes !== undefined || documentChanges.length !== 1 || !TextDocumentEdit.is(documentChanges[0])) {
        return undefined;
      }
      const change = documentChanges[0];
      const edits = change.edits.filter((e): e is TextEdit => !('annotationId' in e));
      if (edits.length !== change.edits.length) {
        return undefined; // annotated edits may ask for confirmation: VS Code handles those
      }
      return { uri: vscode.Uri.parse(change.textDocument.uri).toString(), version: change.textDocument.version, edits };
    }
    const uris = Object.keys(changes ?? {});
    if (changes === undefined || uris.length !== 1) {
      return undefined;
    }
    return { uri: vscode.Uri.parse(uris[0]).toString(), version: null, edits: changes[uris[0]] };
  }
}

/**
 * Where a cursor at `offset` can be once `edits` (offsets before they applied) are applied with
 * nobody moving it: an edit at or around it leaves it at either end of the new text.
 */
export function cursorAfter(
  offset: number,
  edits: { start: number; end: number; text: string }[],
): { min: number; max: number } {
  let delta = 0;
  for (const e of [...edits].sort((a, b) => a.start - b.start)) {
    if (e.end < offset || (e.end === offset && e.start < offset)) {
      delta += e.text.length - (e.end - e.start);
    } else if (e.start <= offset) {
      return { min: e.start + delta, max: e.start + delta + e.text.length };
    }
  }
  return { min: offset + delta, max: offset + delta };
}

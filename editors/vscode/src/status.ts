// The status bar item: mode, model and the job's figures (decode speed, first token) from
// `fastedit/status`.
import * as vscode from 'vscode';
import { isUnverified, type JobRecord } from './edits';
import { figuresText } from './text';

export interface StatusParams {
  mode: string;
  job?: JobRecord;
}

/** `fastedit.status`'s profiles, for the model shown when no job has run yet. */
export type Profiles = Record<string, { provider?: string; model?: string | null; note?: string | null }>;

const MODES: Record<string, { icon: string; label: string }> = {
  fast: { icon: '$(zap)', label: 'Fast' },
  standard: { icon: '$(circle-outline)', label: 'Standard' },
  auto: { icon: '$(arrow-swap)', label: 'Auto' },
};

export class StatusItem implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private mode: string | undefined;
  private job: JobRecord | undefined;
  private profiles: Profiles = {};
  private problem: string | undefined;

  constructor(command: string) {
    this.item = vscode.window.createStatusBarItem('fastedit.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Fast Edit';
    this.item.command = command;
    this.render();
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }

  update(params: StatusParams): void {
    this.mode = params.mode;
    if (params.job !== undefined) {
      this.job = params.job;
    }
    this.problem = undefined;
    this.render();
  }

  setProfiles(profiles: Profiles): void {
    this.profiles = profiles;
    this.render();
  }

  /** The server is not running (failed to start, stopped). */
  setProblem(problem: string | undefined): void {
    this.problem = problem;
    this.render();
  }

  private render(): void {
    if (this.problem !== undefined) {
      this.item.text = '$(error) Fast Edit';
      this.item.tooltip = `Fast Edit: ${this.problem}`;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      return;
    }
    this.item.backgroundColor = undefined;
    if (this.mode === undefined) {
      this.item.text = '$(loading~spin) Fast Edit';
      this.item.tooltip = 'Fast Edit: starting the server';
      return;
    }
    const mode = MODES[this.mode] ?? { icon: '$(question)', label: this.mode };
    const job = this.job;
    const running = job?.state === 'running';
    const parts = [`${running ? '$(sync~spin)' : mode.icon} ${mode.label}`];
    const model = job?.model ?? this.profiles[this.mode === 'standard' ? 'standard' : 'fast']?.model;
    // The offline engine's model is "offline": its figures say so.
    if (model && !(job?.route === 'local' && model === 'offline')) {
      parts.push(model);
    }
    // A model's decode speed and first token, or the offline engine's time.
    const figures = job && figuresText(job);
    if (figures) {
      parts.push(figures);
    }
    if (isUnverified(job)) {
      parts.push('$(warning) unverified');
    }
    this.item.text = parts.join(' · ');
    this.item.tooltip = this.tooltip();
  }

  private tooltip(): vscode.MarkdownString {
    const lines = [`**Fast Edit**: ${this.mode} mode (click to toggle fast mode)`, ''];
    for (const name of ['fast', 'standard']) {
      const p = this.profiles[name];
      if (p) {
        lines.push(`- ${name}: ${p.provider ?? '?'} ${p.model ?? ''}${p.note ? ` (${p.note})` : ''}`);
      }
    }
    const job = this.job;
    if (job) {
      const m = job.metrics ?? {};
      lines.push(
        '',
        `Last job ${job.jobId}: ${job.kind}, ${job.state}, route ${job.route ?? '?'} (${job.model ?? '?'})`,
        '',
        `${m.tokens ?? 0} tokens, ${m.edits ?? 0} edits, ${figuresText(job) ?? 'no figures yet'}`,
      );
      if (job.reason) {
        lines.push('', `Route: ${job.reason}`);
      }
      if (job.error) {
        lines.push('', `Error: ${job.error}`);
      }
      if (isUnverified(job)) {
        lines.push('', `Unverified: ${job.verification?.details ?? 'verification failed'}`);
      }
    }
    const md = new vscode.MarkdownString(lines.join('\n'));
    md.isTrusted = false;
    return md;
  }
}

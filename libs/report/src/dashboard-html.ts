import { page } from './report-html';

/**
 * The live dashboard's page (`--dashboard-port`): the report's look, its figures fetched from the
 * serving process's own /live.json once a second (dashboard-page.js); nothing else is loaded.
 */
export function renderDashboardHtml(title: string): string {
  const body = `<div class="verdict na" id="verdict">waiting for the first look</div>
<p class="meta">Command: <code id="command"></code>. Live from this process's recorders (the ones its /metrics serves), once a second; the run's summary and report are in its output directory.</p>
<div class="verdicts" id="boxes"></div>
<div id="charts"></div>`;
  return page(title, body, {}, 'dashboard-page.js');
}

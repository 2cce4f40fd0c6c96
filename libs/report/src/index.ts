export { writeReport } from './write-report';
export type { ReportOptions } from './write-report';
export { deviationCdf, loadReport, pacingBins } from './report-data';
export type { ByOrigin, PacingBins, ProcessTimeline, ReportData, SessionRow } from './report-data';
export { escapeHtml, page, renderReportHtml } from './report-html';
export { renderDashboardHtml } from './dashboard-html';
export { loadSweepReport, renderSweepHtml } from './sweep-report';
export type { SweepReportData } from './sweep-report';
export { loadHttpReport, renderHttpHtml } from './http-report';
export type { HttpReportData } from './http-report';

/* Error types */
export { ReportInputError } from './report-input-error';
export type { ReportInputCode } from './report-input-error';

import type { CliCommand } from '@duplex-bench/cli';

/**
 * A command that may serve `--dashboard-port`: its io renders the page in the report's look. The
 * report's code loads only when a dashboard starts.
 */
export function withDashboardPage(command: CliCommand): CliCommand {
  const dashboardPage = async (title: string) => (await import('@duplex-bench/report')).renderDashboardHtml(title);
  return { ...command, run: (argv, io) => command.run(argv, { ...io, dashboardPage }) };
}

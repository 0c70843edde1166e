// The Perses plugins the dashboards use, bundled into the UI from their npm packages (each
// package's resource is its package.json `perses` section, as `getPluginModule()` returns
// it). The server loads the same packages with their CUE schemas to validate dashboards.
import { dynamicImportPluginLoader, PluginLoader } from '@perses-dev/plugin-system';
import * as barChart from '@perses-dev/bar-chart-plugin';
import * as gaugeChart from '@perses-dev/gauge-chart-plugin';
import * as loki from '@perses-dev/loki-plugin';
import * as markdown from '@perses-dev/markdown-plugin';
import * as prometheus from '@perses-dev/prometheus-plugin';
import * as statChart from '@perses-dev/stat-chart-plugin';
import * as table from '@perses-dev/table-plugin';
import * as timeSeriesChart from '@perses-dev/timeseries-chart-plugin';
import * as victoriaLogs from '../vendor/victorialogs-plugin/src';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type PluginPackage = { getPluginModule: () => any };

const PACKAGES: PluginPackage[] = [prometheus, victoriaLogs, loki, statChart, timeSeriesChart, table, barChart, gaugeChart, markdown];

export const pluginLoader: PluginLoader = dynamicImportPluginLoader(
  PACKAGES.map((pkg) => ({
    resource: pkg.getPluginModule(),
    importPlugin: () => Promise.resolve(pkg),
  }))
);

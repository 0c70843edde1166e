import { PluginModuleResource, PluginModuleSpec } from '@perses-dev/plugin-system';
import packageJson from '../package.json';

/**
 * Returns the plugin module information from package.json
 */
export function getPluginModule(): PluginModuleResource {
  const { name, version, perses } = packageJson;
  return {
    kind: 'PluginModule',
    metadata: {
      name,
      version,
    },
    spec: perses as PluginModuleSpec,
  };
}

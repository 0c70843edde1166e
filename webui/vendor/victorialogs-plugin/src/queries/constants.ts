export const DATASOURCE_KIND = 'VictoriaLogsDatasource';
export const DEFAULT_DATASOURCE = { kind: DATASOURCE_KIND };

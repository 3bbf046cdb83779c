/** Version of osm itself, and the Osmedeus version whose behaviour it implements. */
export const VERSION = '0.1.0';
export const REFERENCE_VERSION = 'v5.1.0';
export const PRODUCT = 'osm';

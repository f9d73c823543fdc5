/** The codegauge version recorded in every signature. Keep in step with package.json (a test checks). */
export const VERSION = '0.1.0';

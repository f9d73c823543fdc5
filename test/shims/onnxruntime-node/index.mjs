// ES module entry of the development stand-in (see index.cjs): the same instance for import and require.
import { createRequire } from 'node:module';

const ort = createRequire(import.meta.url)('./index.cjs');
export default ort;
export const { InferenceSession, Tensor, env } = ort;

import { resolveTransformers } from '../llm/transformers.js';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { createRequire } from 'node:module';

/**
 * Runs a transformers.js encoder on its own thread and answers synchronously: the metric spine
 * (`segmentStatistics`) is synchronous while ONNX inference is not, so the caller posts token ids, blocks on an
 * `Atomics.wait` until the worker has answered, and takes the answer with `receiveMessageOnPort`. The model is
 * loaded once (asynchronously, from the metric's `ready`). One text is encoded per call, so no padding enters a
 * window (the reference pads batches; see the README).
 */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { port, flag, transformers } = workerData;
const T = require(transformers);
const models = new Map();
port.on('message', async (msg) => {
  let reply;
  try {
    if (msg.type === 'unload') {
      const entry = models.get(msg.key);
      models.delete(msg.key);
      if (entry && entry.model.dispose) await entry.model.dispose();
      reply = { ok: true };
    } else if (msg.type === 'load') {
      if (msg.localRoot) {
        T.env.localModelPath = msg.localRoot;
        T.env.allowLocalModels = true;
        T.env.allowRemoteModels = false;
      } else {
        T.env.allowRemoteModels = true;
        if (msg.cacheDir) T.env.cacheDir = msg.cacheDir;
        if (msg.remoteHost) T.env.remoteHost = msg.remoteHost;
      }
      const model = await T.AutoModel.from_pretrained(msg.name, { dtype: 'fp32', progress_callback: msg.progress ? (p) => port.postMessage({ progress: p }) : undefined });
      const inputNames = model.sessions && model.sessions.model ? model.sessions.model.inputNames : [];
      models.set(msg.key, { model, inputNames });
      reply = { ok: true, inputNames };
    } else {
      const { model, inputNames } = models.get(msg.key);
      const n = msg.ids.length;
      const feeds = {
        input_ids: new T.Tensor('int64', BigInt64Array.from(msg.ids, (x) => BigInt(x)), [1, n]),
        attention_mask: new T.Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]),
      };
      if (inputNames.includes('token_type_ids')) feeds.token_type_ids = new T.Tensor('int64', new BigInt64Array(n), [1, n]);
      const out = await model(feeds);
      const hidden = out.last_hidden_state;
      if (!hidden) throw new Error('the model has no last_hidden_state output (outputs: ' + Object.keys(out).join(', ') + ')');
      reply = { ok: true, data: hidden.data, dims: hidden.dims };
    }
  } catch (e) {
    reply = { ok: false, error: String((e && e.message) || e).split('\\n')[0] };
  }
  reply.seq = msg.seq;
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
`;

export interface EncoderLoad {
  /** Folder above the model folder (transformers.js `env.localModelPath`), for a local model. */
  localRoot?: string;
  /** The model folder's name under localRoot, or a hub id. */
  name: string;
  cacheDir?: string;
  remoteHost?: string;
  progress?: (p: { status?: string; file?: string; progress?: number }) => void;
}

/** The one encoder thread of the process (ONNX Runtime's Node binding is not safe across several threads). */
let shared: { port: MessagePort; worker: Worker; flag: Int32Array } | null = null;
let nextKey = 1;
let nextSeq = 1;

function thread(): { port: MessagePort; worker: Worker; flag: Int32Array } {
  if (!shared) {
    const require = createRequire(import.meta.url);
    const transformers = resolveTransformers('codebertscore', (id) => require.resolve(id));
    const { port1, port2 } = new MessageChannel();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { port: port2, flag, transformers }, transferList: [port2] });
    worker.unref();
    port1.unref();
    worker.on('exit', () => (shared = null));
    shared = { port: port1, worker, flag };
  }
  return shared;
}

interface EncodeReply {
  ok: boolean;
  error?: string;
  data?: Float32Array;
  dims?: number[];
  seq?: number;
}

/** Seconds to wait for one window's hidden states before giving up (a dead or stuck encoder thread). */
const ENCODE_TIMEOUT_MS = 300_000;

export class SyncEncoder {
  private readonly port: MessagePort;
  private readonly flag: Int32Array;
  private readonly key = nextKey++;
  inputNames: string[] = [];

  constructor() {
    const t = thread();
    this.port = t.port;
    this.flag = t.flag;
  }

  /** Loads the model on the worker; rejects with the loader's message. */
  load(options: EncoderLoad): Promise<void> {
    const { progress, ...rest } = options;
    return new Promise((resolve, reject) => {
      const onMessage = (msg: { progress?: never; ok?: boolean; error?: string; inputNames?: string[] }) => {
        if (msg.progress) {
          progress?.(msg.progress);
          return;
        }
        this.port.off('message', onMessage);
        this.port.unref();
        if (msg.ok) {
          this.inputNames = msg.inputNames ?? [];
          resolve();
        } else reject(new Error(msg.error));
      };
      this.port.on('message', onMessage);
      this.port.ref();
      Atomics.store(this.flag, 0, 0);
      this.port.postMessage({ type: 'load', key: this.key, ...rest, progress: progress !== undefined });
    });
  }

  /** Hidden states of one window of token ids: a (length x dim) Float32Array. */
  encode(ids: readonly number[]): { data: Float32Array; dim: number } {
    const seq = nextSeq++;
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage({ type: 'run', key: this.key, ids, seq });
    // The reply is the message carrying this request's number: the flag can be raised a moment before the message
    // is readable, and a late reply to an earlier, abandoned request must not be taken for this one.
    const deadline = Date.now() + ENCODE_TIMEOUT_MS;
    let reply: EncodeReply | undefined;
    while (!reply) {
      const message = receiveMessageOnPort(this.port)?.message as EncodeReply | undefined;
      if (message) {
        if (message.seq === seq) reply = message;
        else Atomics.store(this.flag, 0, 0); // a stale reply: drop it and wait for ours
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the encoder thread did not answer within ${ENCODE_TIMEOUT_MS / 1000} s`);
      Atomics.wait(this.flag, 0, 0, Math.min(left, 20));
    }
    if (!reply.ok) throw new Error(reply.error);
    const dims = reply.dims!;
    return { data: reply.data!, dim: dims[dims.length - 1] };
  }

  /** Frees this model on the encoder thread (the thread itself stays for the process and does not keep it alive). */
  close(): Promise<void> {
    return new Promise((resolve) => {
      const onMessage = () => {
        this.port.off('message', onMessage);
        this.port.unref();
        resolve();
      };
      this.port.on('message', onMessage);
      this.port.ref();
      Atomics.store(this.flag, 0, 0);
      this.port.postMessage({ type: 'unload', key: this.key });
    });
  }
}

'use strict';
/**
 * The development install's onnxruntime-node: ONNX Runtime's WebAssembly build (onnxruntime-web, which has no install
 * script) behind the package name transformers.js imports in Node (package.json `overrides`).
 *
 * Why: onnxruntime-node's install script downloads CUDA libraries on every Linux x64 install (1.21 parses `nvcc
 * --version` and fails on CUDA 13; 1.22 to 1.30 fetch CUDA 12 from nuget.org unconditionally, failing offline), so
 * a plain `npm ci` failed on GPU machines. The CodeBERTScore and embedding tests still run their tiny ONNX models
 * through the real transformers.js path; the WebAssembly kernels give the same values as the native ones there
 * (largest difference from NumPy 2.9e-8 either way). Users who install @huggingface/transformers get the native
 * onnxruntime-node; `overrides` never applies to a project that depends on codegauge.
 */
const { dirname } = require('node:path');
const { pathToFileURL } = require('node:url');
const ort = require('onnxruntime-web');

// transformers.js points the WebAssembly files at a CDN unless a path is set: use the installed ones (offline).
ort.env.wasm.wasmPaths = pathToFileURL(dirname(require.resolve('onnxruntime-web')) + '/').href;
// One thread, as the native CPU build runs these tiny models: no worker threads left behind by a test file.
ort.env.wasm.numThreads = 1;
module.exports = ort;

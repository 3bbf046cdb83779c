/**
 * Response compression (gzip/brotli through @fastify/compress) for the dashboard's text files and
 * the API's JSON. Event streams are left alone (a compressor would hold lines back), and so are
 * downloads of other types (their Content-Length stays exact). Request bodies are never inflated.
 */
import type { FastifyInstance } from 'fastify';
import compress from '@fastify/compress';

/** Content types worth compressing on the fly (built assets also ship pre-compressed twins). */
export const COMPRESSIBLE = /^(application\/json|text\/html|text\/css|text\/javascript|application\/javascript|image\/svg\+xml|application\/manifest\+json)\b/i;

/** Registers compression; call before the routes (the plugin hooks each route as it is added). */
export async function registerCompression(server: FastifyInstance): Promise<void> {
  await server.register(compress, {
    global: true,
    globalDecompression: false,
    encodings: ['br', 'gzip'],
    threshold: 1024,
    customTypes: COMPRESSIBLE,
  });
}

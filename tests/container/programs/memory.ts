// Holds 192 MiB: beyond a maxMemoryMb of 64.
const chunks: Buffer[] = [];
for (let i = 0; i < 48; i++) chunks.push(Buffer.alloc(4 << 20, 1));
return chunks.length;

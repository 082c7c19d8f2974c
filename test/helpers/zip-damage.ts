// Real zip files made wrong after the fact, as a disk, a transfer or a hand can leave them: an entry's bytes altered
// with its CRC-32 kept, a wrong CRC-32 or size written in its headers. Both headers are changed (the local one
// before the data and the central directory's), so the damage is the same whichever one a reader trusts.

const u32 = (zip: Uint8Array, at: number) => new DataView(zip.buffer, zip.byteOffset, zip.byteLength).getUint32(at, true);
const u16 = (zip: Uint8Array, at: number) => new DataView(zip.buffer, zip.byteOffset, zip.byteLength).getUint16(at, true);
const setU32 = (zip: Uint8Array, at: number, value: number) => new DataView(zip.buffer, zip.byteOffset, zip.byteLength).setUint32(at, value >>> 0, true);

interface Located {
  /** Offsets of the local header, the central directory's header and the entry's data. */
  local: number;
  central: number;
  data: number;
  compressedSize: number;
  crc32: number;
  uncompressedSize: number;
}

/** Where the entry `name` of `zip` is (zips without zip64, as fflate writes them). */
export function locate(zip: Uint8Array, name: string): Located {
  let end = zip.length - 22;
  while (end >= 0 && u32(zip, end) !== 0x06054b50) end--;
  if (end < 0) throw new Error('no end of central directory');
  const count = u16(zip, end + 10);
  let at = u32(zip, end + 16);
  for (let i = 0; i < count; i++) {
    if (u32(zip, at) !== 0x02014b50) throw new Error(`no central directory header at ${at}`);
    const nameLength = u16(zip, at + 28);
    const entryName = Buffer.from(zip.subarray(at + 46, at + 46 + nameLength)).toString('utf8');
    if (entryName === name) {
      const local = u32(zip, at + 42);
      const data = local + 30 + u16(zip, local + 26) + u16(zip, local + 28);
      return { local, central: at, data, compressedSize: u32(zip, at + 20), crc32: u32(zip, at + 16), uncompressedSize: u32(zip, at + 24) };
    }
    at += 46 + nameLength + u16(zip, at + 30) + u16(zip, at + 32);
  }
  throw new Error(`no entry ${name}`);
}

/** A copy of `zip` whose entry `name` declares `crc` as its CRC-32. */
export function withCrc(zip: Uint8Array, name: string, crc: number): Uint8Array {
  const out = zip.slice();
  const e = locate(out, name);
  setU32(out, e.local + 14, crc);
  setU32(out, e.central + 16, crc);
  return out;
}

/** A copy of `zip` whose entry `name` declares `size` uncompressed bytes (and `compressed`, if given). */
export function withSize(zip: Uint8Array, name: string, size: number, compressed?: number): Uint8Array {
  const out = zip.slice();
  const e = locate(out, name);
  setU32(out, e.local + 22, size);
  setU32(out, e.central + 24, size);
  if (compressed !== undefined) {
    setU32(out, e.local + 18, compressed);
    setU32(out, e.central + 20, compressed);
  }
  return out;
}

/**
 * A copy of `zip` whose stored (uncompressed) entry `name` has `from` replaced by `to` (as long) in its data, the
 * declared CRC-32 and sizes left as they were.
 */
export function withData(zip: Uint8Array, name: string, from: string, to: string): Uint8Array {
  if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error('the replacement must be as long');
  const out = zip.slice();
  const e = locate(out, name);
  if (e.compressedSize !== e.uncompressedSize) throw new Error(`${name} is compressed: store it (level 0) to alter its text`);
  const data = Buffer.from(out.buffer, out.byteOffset + e.data, e.compressedSize);
  const at = data.indexOf(from);
  if (at < 0) throw new Error(`${name} does not hold ${from}`);
  data.write(to, at);
  return out;
}

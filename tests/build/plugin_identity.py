#!/usr/bin/env python3
"""What Slurm reads from a select plugin before it calls anything: its plugin_type,
plugin_id and how many select_p_ entry points it exports, read from the .so's symbols and
data (nm, readelf), not by loading it. Prints "TYPE ID ENTRY_POINTS".

    plugin_identity.py PLUGIN.so
"""
import struct
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def main(so):
    symbols = {}  # name -> (address, size)
    entry_points = 0
    for line in run('nm', '-D', '-S', '--defined-only', so).splitlines():
        f = line.split()
        if len(f) == 4:
            symbols[f[3]] = (int(f[0], 16), int(f[1], 16))
        if f and f[-1].startswith('select_p_'):
            entry_points += 1
    sections = []  # (address, file offset, size) of sections with file contents
    for line in run('readelf', '-SW', so).splitlines():
        f = line.replace('[ ', '[').split()
        if len(f) > 6 and f[0].startswith('[') and f[1].startswith('.') and f[2] != 'NOBITS':
            sections.append((int(f[3], 16), int(f[4], 16), int(f[5], 16)))

    def read(name):
        if name not in symbols:
            sys.exit(f'{so}: no symbol {name}')
        addr, size = symbols[name]
        for vaddr, off, length in sections:
            if vaddr <= addr < vaddr + length:
                with open(so, 'rb') as fh:
                    fh.seek(off + addr - vaddr)
                    return fh.read(size)
        sys.exit(f'{so}: {name} lies in no section with contents')

    plugin_id = read('plugin_id')
    if len(plugin_id) != 4:
        sys.exit(f'{so}: plugin_id is {len(plugin_id)} bytes, expected a uint32_t')
    plugin_type = read('plugin_type').split(b'\0')[0].decode()
    print(plugin_type, struct.unpack('<I', plugin_id)[0], entry_points)


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

// Package sandbox is the WASI preview-1 world every engine gives a plugin: no arguments, no
// environment, no preopened directories, no sockets, an empty stdin, stdout and stderr captured
// into one bounded buffer, a fake clock and a deterministic random source. Both engines serve
// the same implementation, so a plugin that reads the clock or asks for random bytes behaves
// the same on wazero and wasmtime and on every run.
//
// The package is engine-neutral: an engine adapts its memory to Memory and forwards each import
// to Sys.Call. A Sys belongs to one instance and one goroutine; it is not safe for concurrent
// use. The signature table (Signatures) is immutable and safe to share.
package sandbox

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
)

// Module is the only import module a plugin may use.
const Module = "wasi_snapshot_preview1"

// ValueType is a WebAssembly number type as it appears in an import signature.
type ValueType byte

// Value types used by WASI preview 1.
const (
	I32 ValueType = 0x7f
	I64 ValueType = 0x7e
)

// Signature is the type of one WASI function.
type Signature struct {
	Params  []ValueType
	Results []ValueType
}

func sig(results int, params ...ValueType) Signature {
	s := Signature{Params: params}
	if results == 1 {
		s.Results = []ValueType{I32}
	}
	return s
}

// Signatures lists every WASI preview-1 function by name. Every one is served; those that
// touch a capability the sandbox withholds return an error number.
var Signatures = map[string]Signature{
	"args_get":                sig(1, I32, I32),
	"args_sizes_get":          sig(1, I32, I32),
	"environ_get":             sig(1, I32, I32),
	"environ_sizes_get":       sig(1, I32, I32),
	"clock_res_get":           sig(1, I32, I32),
	"clock_time_get":          sig(1, I32, I64, I32),
	"fd_advise":               sig(1, I32, I64, I64, I32),
	"fd_allocate":             sig(1, I32, I64, I64),
	"fd_close":                sig(1, I32),
	"fd_datasync":             sig(1, I32),
	"fd_fdstat_get":           sig(1, I32, I32),
	"fd_fdstat_set_flags":     sig(1, I32, I32),
	"fd_fdstat_set_rights":    sig(1, I32, I64, I64),
	"fd_filestat_get":         sig(1, I32, I32),
	"fd_filestat_set_size":    sig(1, I32, I64),
	"fd_filestat_set_times":   sig(1, I32, I64, I64, I32),
	"fd_pread":                sig(1, I32, I32, I32, I64, I32),
	"fd_prestat_get":          sig(1, I32, I32),
	"fd_prestat_dir_name":     sig(1, I32, I32, I32),
	"fd_pwrite":               sig(1, I32, I32, I32, I64, I32),
	"fd_read":                 sig(1, I32, I32, I32, I32),
	"fd_readdir":              sig(1, I32, I32, I32, I64, I32),
	"fd_renumber":             sig(1, I32, I32),
	"fd_seek":                 sig(1, I32, I64, I32, I32),
	"fd_sync":                 sig(1, I32),
	"fd_tell":                 sig(1, I32, I32),
	"fd_write":                sig(1, I32, I32, I32, I32),
	"path_create_directory":   sig(1, I32, I32, I32),
	"path_filestat_get":       sig(1, I32, I32, I32, I32, I32),
	"path_filestat_set_times": sig(1, I32, I32, I32, I32, I64, I64, I32),
	"path_link":               sig(1, I32, I32, I32, I32, I32, I32, I32),
	"path_open":               sig(1, I32, I32, I32, I32, I32, I64, I64, I32, I32),
	"path_readlink":           sig(1, I32, I32, I32, I32, I32, I32),
	"path_remove_directory":   sig(1, I32, I32, I32),
	"path_rename":             sig(1, I32, I32, I32, I32, I32, I32),
	"path_symlink":            sig(1, I32, I32, I32, I32, I32),
	"path_unlink_file":        sig(1, I32, I32, I32),
	"poll_oneoff":             sig(1, I32, I32, I32, I32),
	"proc_exit":               sig(0, I32),
	"proc_raise":              sig(1, I32),
	"sched_yield":             sig(1),
	"random_get":              sig(1, I32, I32),
	"sock_accept":             sig(1, I32, I32, I32),
	"sock_recv":               sig(1, I32, I32, I32, I32, I32, I32),
	"sock_send":               sig(1, I32, I32, I32, I32, I32),
	"sock_shutdown":           sig(1, I32, I32),
}

// Names returns the WASI function names in a fixed (sorted) order.
func Names() []string {
	return slices.Sorted(maps.Keys(Signatures))
}

// Equal reports whether a signature matches s exactly.
func (s Signature) Equal(params, results []ValueType) bool {
	if len(params) != len(s.Params) || len(results) != len(s.Results) {
		return false
	}
	for i := range params {
		if params[i] != s.Params[i] {
			return false
		}
	}
	for i := range results {
		if results[i] != s.Results[i] {
			return false
		}
	}
	return true
}

// WASI error numbers the sandbox returns.
const (
	errnoSuccess = 0
	errnoBadf    = 8
	errnoFault   = 21
	errnoInval   = 28
	errnoNosys   = 52
	errnoSpipe   = 70
)

// Memory is an instance's linear memory as the sandbox sees it. Read returns a view of guest
// memory (writes to it reach the guest) valid until the guest runs again; both report false
// when the range is out of bounds.
type Memory interface {
	Read(offset, n uint32) ([]byte, bool)
	Write(offset uint32, b []byte) bool
}

// Epoch is the fake wall-clock time a plugin starts at (2000-01-01T00:00:00Z, in nanoseconds).
const Epoch = 946684800 * 1_000_000_000

// ClockStep is how far the fake clocks advance on every reading.
const ClockStep = 1000

// Exit is returned by Call when the guest called proc_exit.
type Exit struct{ Code uint32 }

func (e *Exit) Error() string { return fmt.Sprintf("proc_exit(%d)", e.Code) }

// Sys is the per-instance state of the sandbox: the output buffer, the fake clock and the
// random source. Create one per instance with New.
type Sys struct {
	out     []byte
	limit   int
	dropped int
	clock   uint64
	rng     *rand.ChaCha8
}

// seed is the fixed seed of the deterministic random source.
var seed = [32]byte{'l', 'o', 'a', 'd', 'o', 'u', 't', '.', 's', 'a', 'n', 'd', 'b', 'o', 'x'}

// New returns a fresh Sys that keeps at most outputLimit bytes of guest stdout and stderr.
func New(outputLimit int) *Sys {
	return &Sys{limit: outputLimit, rng: rand.NewChaCha8(seed)}
}

// Output returns the guest's stdout and stderr, interleaved in write order and truncated to the
// limit; a note says how many bytes were dropped.
func (s *Sys) Output() string {
	if s.dropped == 0 {
		return string(s.out)
	}
	return fmt.Sprintf("%s\n[%d bytes of plugin output dropped]", s.out, s.dropped)
}

func (s *Sys) write(b []byte) {
	room := s.limit - len(s.out)
	if room < 0 {
		room = 0
	}
	if len(b) > room {
		s.dropped += len(b) - room
		b = b[:room]
	}
	s.out = append(s.out, b...)
}

// Call runs WASI function name with the raw arguments (each i32 or i64 zero-extended to 64 bits)
// and returns its result (the errno; 0 for proc_exit). A proc_exit comes back as *Exit; the
// engine must stop the guest. An unknown name is a programming error of the engine.
func (s *Sys) Call(name string, mem Memory, args []uint64) (uint32, error) {
	a := func(i int) uint32 { return uint32(args[i]) }
	switch name {
	case "proc_exit":
		return 0, &Exit{Code: a(0)}
	case "args_sizes_get", "environ_sizes_get":
		if !mem.Write(a(0), make([]byte, 4)) || !mem.Write(a(1), make([]byte, 4)) {
			return errnoFault, nil
		}
		return errnoSuccess, nil
	case "args_get", "environ_get", "sched_yield":
		return errnoSuccess, nil
	case "clock_res_get":
		if a(0) > 3 {
			return errnoInval, nil
		}
		return s.put64(mem, a(1), ClockStep), nil
	case "clock_time_get":
		if a(0) > 3 {
			return errnoInval, nil
		}
		s.clock += ClockStep
		now := s.clock
		if a(0) == 0 {
			now += Epoch
		}
		return s.put64(mem, a(2), now), nil
	case "random_get":
		buf, ok := mem.Read(a(0), a(1))
		if !ok {
			return errnoFault, nil
		}
		for i := 0; i < len(buf); i += 8 {
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], s.rng.Uint64())
			copy(buf[i:], w[:])
		}
		return errnoSuccess, nil
	case "fd_write":
		return s.fdWrite(mem, a(0), a(1), a(2), a(3)), nil
	case "fd_read":
		if a(0) != 0 {
			return errnoBadf, nil
		}
		return s.put32(mem, a(3), 0), nil // stdin is empty
	case "fd_fdstat_get":
		if a(0) > 2 {
			return errnoBadf, nil
		}
		st := make([]byte, 24)
		st[0] = 2 // character device
		binary.LittleEndian.PutUint64(st[8:], ^uint64(0))
		if !mem.Write(a(1), st) {
			return errnoFault, nil
		}
		return errnoSuccess, nil
	case "fd_filestat_get":
		if a(0) > 2 {
			return errnoBadf, nil
		}
		st := make([]byte, 64)
		st[16] = 2 // character device
		if !mem.Write(a(1), st) {
			return errnoFault, nil
		}
		return errnoSuccess, nil
	case "fd_fdstat_set_flags", "fd_close", "fd_sync", "fd_datasync":
		if a(0) > 2 {
			return errnoBadf, nil
		}
		return errnoSuccess, nil
	case "fd_seek", "fd_tell":
		if a(0) > 2 {
			return errnoBadf, nil
		}
		return errnoSpipe, nil
	case "poll_oneoff":
		return s.pollOneoff(mem, a(0), a(1), a(2), a(3)), nil
	case "proc_raise", "sock_accept", "sock_recv", "sock_send", "sock_shutdown":
		return errnoNosys, nil
	}
	if _, ok := Signatures[name]; !ok {
		return 0, fmt.Errorf("sandbox: unknown function %q", name)
	}
	// Every other fd_* and path_* function names a descriptor the sandbox never opened: there
	// are no files, no preopened directories and no sockets.
	return errnoBadf, nil
}

func (s *Sys) put32(mem Memory, off, v uint32) uint32 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	if !mem.Write(off, b[:]) {
		return errnoFault
	}
	return errnoSuccess
}

func (s *Sys) put64(mem Memory, off uint32, v uint64) uint32 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if !mem.Write(off, b[:]) {
		return errnoFault
	}
	return errnoSuccess
}

func (s *Sys) fdWrite(mem Memory, fd, iovs, n, nwritten uint32) uint32 {
	if fd != 1 && fd != 2 {
		return errnoBadf
	}
	vec, ok := mem.Read(iovs, n*8)
	if !ok || uint64(n)*8 > uint64(^uint32(0)) {
		return errnoFault
	}
	var total uint32
	for i := uint32(0); i < n; i++ {
		ptr := binary.LittleEndian.Uint32(vec[i*8:])
		ln := binary.LittleEndian.Uint32(vec[i*8+4:])
		b, ok := mem.Read(ptr, ln)
		if !ok {
			return errnoFault
		}
		s.write(b)
		total += ln
	}
	return s.put32(mem, nwritten, total)
}

// pollOneoff answers every subscription at once: a clock subscription fires after the fake
// clock advanced by its timeout, stdin is at end of file, stdout and stderr are writable, and
// any other descriptor is bad.
func (s *Sys) pollOneoff(mem Memory, in, out, n, nevents uint32) uint32 {
	if n == 0 {
		return errnoInval
	}
	if uint64(n)*48 > uint64(^uint32(0)) {
		return errnoFault
	}
	subs, ok := mem.Read(in, n*48)
	if !ok {
		return errnoFault
	}
	subs = append([]byte(nil), subs...)
	events := make([]byte, 32*n)
	for i := uint32(0); i < n; i++ {
		sub := subs[i*48:]
		ev := events[i*32:]
		copy(ev[:8], sub[:8]) // userdata
		tag := sub[8]
		ev[10] = tag
		errno := uint16(errnoSuccess)
		switch tag {
		case 0: // clock
			timeout := binary.LittleEndian.Uint64(sub[24:])
			abs := binary.LittleEndian.Uint16(sub[40:])&1 == 1
			id := binary.LittleEndian.Uint32(sub[16:])
			switch {
			case id > 3:
				errno = errnoInval
			case abs:
				at := timeout
				if id == 0 && at >= Epoch {
					at -= Epoch
				}
				if at > s.clock {
					s.clock = at
				}
			default:
				s.clock += timeout
			}
		case 1, 2: // fd_read, fd_write
			fd := binary.LittleEndian.Uint32(sub[16:])
			switch {
			case tag == 1 && fd == 0:
				binary.LittleEndian.PutUint16(ev[24:], 1) // hang-up: end of file
			case tag == 2 && (fd == 1 || fd == 2):
			default:
				errno = errnoBadf
			}
		default:
			errno = errnoInval
		}
		binary.LittleEndian.PutUint16(ev[8:], errno)
	}
	if !mem.Write(out, events) {
		return errnoFault
	}
	return s.put32(mem, nevents, n)
}

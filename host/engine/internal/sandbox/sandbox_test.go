package sandbox

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
)

func TestSpan(t *testing.T) {
	const mem = 1 << 16
	tests := []struct {
		name    string
		ptr, n  uint32
		wantErr bool
	}{
		{"inside", 10, 20, false},
		{"up to the end", mem - 4, 4, false},
		{"empty at the end", mem, 0, false},
		{"one past the end", mem - 4, 5, true},
		{"wraps in 32 bits", 0xFFFFFFF0, 0x20, true},
		{"over the output cap", 0, 101, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ptr, n, err := Span(uint64(tc.ptr)<<32|uint64(tc.n), mem, 100)
			if tc.wantErr {
				assert.ErrorIs(t, err, engine.ErrOutput, "Span(ptr=%#x, len=%#x)", tc.ptr, tc.n)
				return
			}
			require.NoError(t, err, "Span(ptr=%#x, len=%#x)", tc.ptr, tc.n)
			assert.Equal(t, [2]uint32{tc.ptr, tc.n}, [2]uint32{ptr, n}, "Span(ptr=%#x, len=%#x)", tc.ptr, tc.n)
		})
	}
}

type flat []byte

func (m flat) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m)) {
		return nil, false
	}
	return m[off : off+n], true
}

func (m flat) Write(off uint32, b []byte) bool {
	if uint64(off)+uint64(len(b)) > uint64(len(m)) {
		return false
	}
	copy(m[off:], b)
	return true
}

func TestFdWriteBoundsOutput(t *testing.T) {
	mem := make(flat, 256)
	copy(mem[100:], "hello world")
	binary.LittleEndian.PutUint32(mem[0:], 100) // iovec: ptr
	binary.LittleEndian.PutUint32(mem[4:], 11)  // iovec: len
	s := New(8)
	for _, fd := range []uint64{1, 2} {
		errno, err := s.Call("fd_write", mem, []uint64{fd, 0, 1, 16})
		require.NoError(t, err, "fd_write(%d)", fd)
		assert.Zero(t, errno, "fd_write(%d) errno", fd)
		assert.EqualValues(t, 11, binary.LittleEndian.Uint32(mem[16:]), "fd_write(%d) reports every byte written", fd)
	}
	assert.Equal(t, "hello wo\n[14 bytes of plugin output dropped]", s.Output(), "Output() after 22 bytes with a cap of 8")
	errno, err := s.Call("fd_write", mem, []uint64{3, 0, 1, 16})
	require.NoError(t, err, "fd_write(3)")
	assert.EqualValues(t, errnoBadf, errno, "fd_write on a descriptor that does not exist")
	errno, err = s.Call("fd_write", mem, []uint64{1, 250, 1, 16})
	require.NoError(t, err, "fd_write with iovecs past memory")
	assert.EqualValues(t, errnoFault, errno, "fd_write with iovecs past memory")
}

func TestClockAndRandomAreDeterministic(t *testing.T) {
	read := func() []byte {
		mem := make(flat, 64)
		s := New(0)
		for _, call := range []struct {
			name string
			args []uint64
		}{
			{"clock_time_get", []uint64{0, 1, 0}},
			{"clock_time_get", []uint64{1, 1, 8}},
			{"random_get", []uint64{16, 13}},
		} {
			errno, err := s.Call(call.name, mem, call.args)
			require.NoError(t, err, "%s%v", call.name, call.args)
			require.Zero(t, errno, "%s%v errno", call.name, call.args)
		}
		return mem
	}
	first, second := read(), read()
	assert.Equal(t, first, second, "two fresh sandboxes must read the same clocks and random bytes")
	assert.EqualValues(t, Epoch+ClockStep, binary.LittleEndian.Uint64(first[0:]), "first wall-clock reading")
	assert.EqualValues(t, 2*ClockStep, binary.LittleEndian.Uint64(first[8:]), "monotonic reading after one wall-clock reading")
	assert.NotEqual(t, make([]byte, 13), []byte(first[16:29]), "random_get filled nothing")
}

func TestPollOneoffAdvancesTheFakeClock(t *testing.T) {
	mem := make(flat, 256)
	// One relative clock subscription of 5 s.
	binary.LittleEndian.PutUint64(mem[0:], 42) // userdata
	mem[8] = 0                                 // clock
	binary.LittleEndian.PutUint32(mem[16:], 1) // monotonic
	binary.LittleEndian.PutUint64(mem[24:], 5_000_000_000)
	s := New(0)
	errno, err := s.Call("poll_oneoff", mem, []uint64{0, 64, 1, 200})
	require.NoError(t, err, "poll_oneoff")
	require.Zero(t, errno, "poll_oneoff errno")
	assert.EqualValues(t, 1, binary.LittleEndian.Uint32(mem[200:]), "events written")
	assert.EqualValues(t, 42, binary.LittleEndian.Uint64(mem[64:]), "event userdata")
	_, err = s.Call("clock_time_get", mem, []uint64{1, 1, 224})
	require.NoError(t, err, "clock_time_get")
	assert.EqualValues(t, 5_000_000_000+ClockStep, binary.LittleEndian.Uint64(mem[224:]), "monotonic clock after sleeping 5 s")
}

func TestProcExit(t *testing.T) {
	_, err := New(0).Call("proc_exit", flat{}, []uint64{7})
	var exit *Exit
	require.ErrorAs(t, err, &exit, "proc_exit(7)")
	assert.EqualValues(t, 7, exit.Code, "exit code")
}

func TestEveryWASIFunctionAnswers(t *testing.T) {
	mem := make(flat, 1024)
	for _, name := range Names() {
		if name == "proc_exit" {
			continue
		}
		args := make([]uint64, len(Signatures[name].Params))
		_, err := New(0).Call(name, mem, args)
		assert.NoError(t, err, "%s with zero arguments", name)
	}
	_, err := New(0).Call("no_such_function", mem, nil)
	assert.Error(t, err, "an unknown function")
}

func TestLimits(t *testing.T) {
	got := Limits(engine.Limits{})
	assert.Equal(t, engine.DefaultLimits, got, "Limits(zero) fills every field from DefaultLimits")
	set := engine.Limits{ModuleBytes: 1, MemoryPages: 2, Deadline: 3, DeadlinePerKiB: 7, OutputBytes: 4, StderrBytes: 5, MaxFiles: 6}
	assert.Equal(t, set, Limits(set), "Limits keeps fields that are set")
	assert.EqualValues(t, MaxPages, Limits(engine.Limits{MemoryPages: 65536}).MemoryPages, "Limits(65536 pages) caps at MaxPages")
}

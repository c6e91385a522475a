# Minimal subreaper shim: become PR_SET_CHILD_SUBREAPER, run argv as a child, reap every orphan.
import ctypes, os, sys, signal
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
for s in (signal.SIGTERM, signal.SIGINT):
    signal.signal(s, lambda n, f: os.kill(pid, n))
status = 0
while True:
    try:
        p, st = os.wait()
    except ChildProcessError:
        break
    if p == pid:
        status = os.waitstatus_to_exitcode(st)
sys.exit(status if status >= 0 else 128 - status)

/* A stand-in for Windows' bcryptprimitives.dll, which Wine 8.0 lacks (kit.py's windows part,
 * work-around 4). Rust >= 1.78 draws its random numbers from ProcessPrng in that DLL, so every
 * Rust-built wheel (ruff, rpds-py, pydantic-core, orjson, tiktoken...) exits 0xC0000135 without it.
 * ProcessPrng fills the buffer and always succeeds on Windows; here it asks BCryptGenRandom,
 * which Wine has. Built by kit.py with Debian's x86_64-w64-mingw32-gcc into the Wine prefix. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
    while (size > 0) {
        ULONG part = size > 0x40000000 ? 0x40000000 : (ULONG)size; /* BCryptGenRandom takes a ULONG */
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, part, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
            return FALSE;
        data += part;
        size -= part;
    }
    return TRUE;
}

/* Compile-only: the current headers keep every declaration of the earlier ones
 * (abi_0_1.h says how). Built as C99 and C11 and, as abi_check.cpp would be, C++17. */
#include "membrane_frame.h"

#include "abi_0_1.h"

int abi_check(void);
int abi_check(void) { return MBR_ABI_VERSION; }

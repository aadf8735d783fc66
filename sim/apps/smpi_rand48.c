/*
 * smpi_rand48.c - drand48 and srand48 with their state in the program, so
 * that under SMPI each simulated rank draws its own sequence.
 *
 * SMPI privatizes only the executable's globals: libc's drand48 state is
 * one for all the ranks of a simulation, so each rank drew every P-th
 * number. FFTW's accuracy check (mpi-bench -y) fills the same random input
 * on every rank and compares: under SMPI it found errors on every rank but
 * one and called MPI_Abort. Linked into the program (sim/apps/fftw), these
 * definitions replace libc's (SMPI loads the program with RTLD_DEEPBIND);
 * erand48 keeps no state of its own.
 */
#include <stdlib.h>

/* zero until srand48, as in glibc */
static unsigned short state[3];

double drand48(void)
{
    return erand48(state);
}

/* POSIX: the high 32 bits of the 48-bit state are the seed, the low 16 bits
 * 0x330E */
void srand48(long seed)
{
    state[0] = 0x330E;
    state[1] = (unsigned short)(seed & 0xffff);
    state[2] = (unsigned short)((seed >> 16) & 0xffff);
}

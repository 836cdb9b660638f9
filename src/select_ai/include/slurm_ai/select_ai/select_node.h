/*
 * One Slurm node as a job test sees it. The C adapter fills an array of these from
 * slurmctld's state (select_ai_nodes.c) and SelectService reads that same array in place
 * (SelectNode): the view is built once in Slurm's terms, then once as the engine's free
 * state, and never copied in between. Plain C, so that both sides share it.
 */
#ifndef SLURM_AI_SELECT_NODE_H
#define SLURM_AI_SELECT_NODE_H

#include <stdint.h>

typedef struct ai_node {
    uint8_t usable;     /* in the candidate bitmap, with room for one node of the job */
    uint64_t free_gpus; /* bit g: GPU g of the node is free */
    uint32_t weight;    /* Slurm's node Weight */
    uint8_t down;       /* down, drained or failing: its NVLink domain is degraded */
} ai_node_t;

#endif

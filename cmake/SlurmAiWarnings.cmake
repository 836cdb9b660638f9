# slurm_ai_warnings(target): the project's warning set, PRIVATE so that consumers of an
# installed target never inherit it.
function(slurm_ai_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wformat=2
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast>
    $<$<BOOL:${SLURM_AI_WERROR}>:-Werror>)
endfunction()

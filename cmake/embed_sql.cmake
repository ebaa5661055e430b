# Turns every sql/*.sql file into a C string constant so the library never
# reads SQL from disk: fdx_sql_<name> holds the text of sql/<name>.sql.
# sql/pg/<name>.sql (PostgreSQL's dialect) becomes fdx_sql_pg_<name>.
# A line "-- @include NAME" stands for the text of sql/NAME.sql without its
# leading comment lines and its final newline (one statement's text shared by
# two, such as a view and a query that cannot trust the store's views);
# "-- @include pg/NAME" stands for sql/pg/NAME.sql the same way. NAME is always
# relative to sql/, whichever folder the including file is in, and an included
# file's own "-- @include" lines are not expanded. The line after an include
# line goes on where the fragment's last line ends: a blank line after it keeps
# that line a line of its own, and the text byte for byte what it was before
# the fragment moved out (the schema's text is compared with the stored one).
# Invoked as: cmake -DSQL_DIR=... -DOUT_C=... -DOUT_H=... -P embed_sql.cmake
file(GLOB sql_files "${SQL_DIR}/*.sql" "${SQL_DIR}/pg/*.sql")
list(SORT sql_files)
set(c_text "/* Generated from the files in sql/ by cmake/embed_sql.cmake. Do not edit. */\n#include \"sql_text.h\"\n\n")
set(h_text "/* Generated from the files in sql/ by cmake/embed_sql.cmake. Do not edit. */\n#ifndef FDX_SQL_TEXT_H\n#define FDX_SQL_TEXT_H\n\n")
foreach(f IN LISTS sql_files)
  get_filename_component(name "${f}" NAME_WE)
  get_filename_component(dir "${f}" DIRECTORY)
  if(dir MATCHES "/pg$")
    set(name "pg_${name}")
  endif()
  file(READ "${f}" body)
  string(REGEX MATCHALL "-- @include (pg/)?[a-z0-9_]+\n" includes "${body}")
  foreach(inc IN LISTS includes)
    string(REGEX REPLACE "-- @include ((pg/)?[a-z0-9_]+)\n" "\\1" part_name "${inc}")
    if(NOT EXISTS "${SQL_DIR}/${part_name}.sql")
      message(FATAL_ERROR "${f}: includes ${part_name}, but there is no ${SQL_DIR}/${part_name}.sql")
    endif()
    file(READ "${SQL_DIR}/${part_name}.sql" part)
    string(REGEX REPLACE "^(--[^\n]*\n)+" "" part "${part}")
    string(REGEX REPLACE "[ \t\n]+$" "" part "${part}")
    string(REPLACE "${inc}" "${part}" body "${body}")
  endforeach()
  string(REPLACE "\\" "\\\\" body "${body}")
  string(REPLACE "\"" "\\\"" body "${body}")
  string(REPLACE "\n" "\\n\"\n    \"" body "${body}")
  string(APPEND c_text "const char fdx_sql_${name}[] =\n    \"${body}\";\n\n")
  string(APPEND h_text "extern const char fdx_sql_${name}[];\n")
endforeach()
string(APPEND h_text "\n#endif\n")
file(WRITE "${OUT_C}.new" "${c_text}")
file(WRITE "${OUT_H}.new" "${h_text}")
file(COPY_FILE "${OUT_C}.new" "${OUT_C}" ONLY_IF_DIFFERENT)
file(COPY_FILE "${OUT_H}.new" "${OUT_H}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT_C}.new" "${OUT_H}.new")
